import { Decider } from '../../domain/decider';
import { badRequest, DomainError } from '../../domain/errors';
import { DomainEvent } from '../../domain/event';
import { appendSize } from '../../ports/event-store.port';
import { BuiltCommand, decideBatch, QueuedCommand } from './batch-decision';

type Said = DomainEvent<'Said', { text: string }>;
type Say = { type: 'Say'; text: string; after?: number };
/** Keeps how many texts were said; refuses empty texts; says nothing twice in a row. */
const sayer: Decider<{ said: number; last: string }, Say, Said> = {
  initialState: () => ({ said: 0, last: '' }),
  evolve: (state, event) => ({ said: state.said + 1, last: event.data.text }),
  decide: (command, state) => {
    if (command.text === '') throw badRequest('empty_text', 'Nothing to say');
    return command.text === state.last ? [] : [{ type: 'Said', data: { text: command.text } }];
  },
  // A command built for the state after `after` texts were said is out of date once more were.
  outdated: (command, state) => command.after !== undefined && state.said > command.after,
};

const queued = (command: Say, build?: QueuedCommand['build']): QueuedCommand => ({
  decider: sayer as unknown as QueuedCommand['decider'],
  command,
  metadata: { occurred_at: command.text },
  build,
  awaitProjections: undefined,
  resolve: () => undefined,
  reject: () => undefined,
  attempts: 0,
});
const said = (...texts: string[]) => texts.map(say);
const say = (text: string) => queued({ type: 'Say', text });
const rebuild = async (): Promise<BuiltCommand<unknown>> => ({ command: {}, metadata: { occurred_at: '' } });
const start = { said: 0, last: '' };

describe('decideBatch', () => {
  it('decides queued commands in order, each on the state the ones before it leave, each event with its command’s metadata', () => {
    const batch = said('a', 'b', 'b', 'c');
    const { decided, state, deferred, failed } = decideBatch(batch, start, Infinity);
    expect(decided.map((d) => d.events)).toEqual([[{ type: 'Said', data: { text: 'a' } }], [{ type: 'Said', data: { text: 'b' } }], [], [{ type: 'Said', data: { text: 'c' } }]]);
    expect(decided.map((d) => d.state)).toEqual([{ said: 1, last: 'a' }, { said: 2, last: 'b' }, { said: 2, last: 'b' }, { said: 3, last: 'c' }]);
    expect(state).toEqual({ said: 3, last: 'c' });
    expect(decided.flatMap((d) => d.toAppend.map((e) => e.metadata.occurred_at))).toEqual(['a', 'b', 'c']);
    expect(new Set(decided.flatMap((d) => d.toAppend.map((e) => e.id))).size).toBe(3);
    expect(deferred).toEqual([]);
    expect(failed).toEqual([]);
  });

  it('a command its decider refuses fails alone, and the next is decided as if it had not been sent', () => {
    const batch = said('a', '', 'b');
    const { decided, failed } = decideBatch(batch, start, Infinity);
    expect(decided.map((d) => d.item)).toEqual([batch[0], batch[2]]);
    expect(decided[1].state).toEqual({ said: 2, last: 'b' });
    expect(failed).toHaveLength(1);
    expect(failed[0].item).toBe(batch[1]);
    expect((failed[0].error as DomainError).code).toBe('bad_request/empty_text');
  });

  it("stays under the append's byte limit: the commands past it wait, in order, for the next append", () => {
    const batch = said('x'.repeat(100), 'y'.repeat(100), 'z'.repeat(100), 'w');
    const one = appendSize(decideBatch([batch[0]], start, Infinity).decided[0].toAppend);
    const { decided, state, deferred } = decideBatch(batch, start, 2 * one + 1);
    expect(decided.map((d) => d.item)).toEqual(batch.slice(0, 2));
    expect(state).toEqual({ said: 2, last: 'y'.repeat(100) });
    expect(deferred).toEqual(batch.slice(2));
  });

  it('the first command that appends always goes, even over the limit (the store refuses it alone); those deciding nothing are not counted', () => {
    const batch = [queued({ type: 'Say', text: '' }), ...said('x'.repeat(500), 'y')];
    const { decided, deferred } = decideBatch(batch, { said: 0, last: 'x'.repeat(500) }, 10);
    // '' fails, the repeat decides nothing, 'y' is the first to append.
    expect(decided.map((d) => d.item)).toEqual(batch.slice(1));
    expect(deferred).toEqual([]);
    expect(decideBatch(said('x'.repeat(500), 'y'), start, 10).deferred).toHaveLength(1);
  });

  it('a built command that meets a newer state than it was built for is set aside to be built again, not decided', () => {
    const stale = queued({ type: 'Say', text: 'late', after: 0 }, rebuild);
    const fresh = queued({ type: 'Say', text: 'on time', after: 1 }, rebuild);
    const { decided, outdated, state } = decideBatch([stale, fresh], { said: 1, last: 'a' }, Infinity);
    expect(outdated).toEqual([stale]);
    expect(decided.map((d) => d.item)).toEqual([fresh]);
    expect(state).toEqual({ said: 2, last: 'on time' });
  });

  it('an out-of-date command that cannot be built again fails alone with 409, nothing of it decided', () => {
    const plain = queued({ type: 'Say', text: 'late', after: 0 });
    const { decided, failed } = decideBatch([plain, say('b')], { said: 1, last: 'a' }, Infinity);
    expect(decided.map((d) => d.events)).toEqual([[{ type: 'Said', data: { text: 'b' } }]]);
    expect(failed.map((f) => (f.error as DomainError).code)).toEqual(['conflict/concurrent_modification']);
  });
});
