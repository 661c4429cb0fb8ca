import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { Decider } from '../../domain/decider';
import { badRequest, DomainError } from '../../domain/errors';
import { DomainEvent } from '../../domain/event';
import { EventStore, EventToAppend } from '../../ports/event-store.port';
import { withOverrides } from '../../../../test/support/event-store-overrides';
import { BuiltCommand, CommandOutcome, QueuedCommand } from './batch-decision';
import { ReadYourWrites } from './read-your-writes';
import { StreamStates } from './stream-states';
import { MAX_ATTEMPTS, StreamWriter } from './stream-writer';

type Numbered = DomainEvent<'Numbered', { n: number }>;
type Take = { type: 'Take'; n: number };
/** A sequence whose numbers only grow (a room timeline's message ids): a number at or below the last is out of date. */
const sequence: Decider<{ last: number }, Take, Numbered> = {
  initialState: () => ({ last: 0 }),
  evolve: (_state, event) => ({ last: event.data.n }),
  outdated: (command, state) => command.n <= state.last,
  decide: (command) => [{ type: 'Numbered', data: { n: command.n } }],
};
/** Counts on from the state it is decided on (needs no building). */
const counter: Decider<{ last: number }, { type: 'Count' }, Numbered> = {
  initialState: () => ({ last: 0 }),
  evolve: (_state, event) => ({ last: event.data.n }),
  decide: (_command, state) => [{ type: 'Numbered', data: { n: state.last + 1 } }],
};
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const numbered = (n: number): EventToAppend[] => [{ type: 'Numbered', data: { n }, metadata: meta }];
const answered: ReadYourWrites = { waitFor: async () => undefined };

const answerOf = (outcome: Promise<unknown>) =>
  outcome.then(
    () => 'ok',
    (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.description}` : `unexpected: ${String(error)}`),
  );

describe('StreamWriter', () => {
  let dir: string;
  let store: SqliteEventStore;
  /** Another process appending to the same log. */
  let other: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-writer-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    other = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
  });
  afterEach(async () => {
    await other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const writerOver = (events: EventStore) => new StreamWriter(events, new StreamStates(events), answered);
  const numbers = async (stream: string) => (await store.readStream(stream)).map((e) => (e.data as { n: number }).n);

  /** A command as the facade queues it, and its answer. */
  function command(decider: Decider<{ last: number }, unknown, Numbered>, what: { command: unknown } | { build: (state: { last: number }) => Promise<BuiltCommand<unknown>> }) {
    let item!: QueuedCommand;
    const outcome = new Promise<CommandOutcome<unknown, DomainEvent>>((resolve, reject) => {
      item = {
        decider: decider as unknown as QueuedCommand['decider'],
        command: 'command' in what ? what.command : undefined,
        metadata: meta,
        build: 'build' in what ? (state) => what.build(state as { last: number }) : undefined,
        awaitProjections: undefined,
        resolve,
        reject,
        attempts: 0,
      };
    });
    return { item, outcome };
  }

  /** A store where another process appends to `stream` just before each of this one's appends to it, `times` times. */
  const losingRaces = (stream: string, times = Infinity) => {
    const lost = { count: 0 };
    const events = withOverrides(store, {
      append: async (...args: Parameters<EventStore['append']>) => {
        if (args[0] === stream && lost.count < times) {
          lost.count++;
          const [newest] = await other.readStream(stream, { direction: 'backwards', maxCount: 1 });
          await other.append(stream, numbered(1_000 * lost.count), newest ? newest.revision : 'no_stream');
        }
        return store.append(...args);
      },
    });
    return { events, lost };
  };

  it('commands that arrive while an append is in flight go together in the next append, in order', async () => {
    const appends: number[] = [];
    const counting = withOverrides(store, {
      append: async (...args: Parameters<EventStore['append']>) => {
        appends.push(args[1].length);
        return store.append(...args);
      },
    });
    const writer = writerOver(counting);
    const sent = Array.from({ length: 50 }, () => command(counter, { command: { type: 'Count' } }));
    for (const { item } of sent) writer.enqueue('count-a', item);
    expect(await Promise.all(sent.map(({ outcome }) => answerOf(outcome)))).toEqual(sent.map(() => 'ok'));
    expect(appends).toEqual([1, 49]);
    expect(await numbers('count-a')).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('another writer appended first: the commands are decided again on fresh state, after its events', async () => {
    await store.append('count-b', numbered(1), 'no_stream');
    const { events, lost } = losingRaces('count-b', 1);
    const writer = writerOver(events);
    const sent = [command(counter, { command: { type: 'Count' } }), command(counter, { command: { type: 'Count' } })];
    for (const { item } of sent) writer.enqueue('count-b', item);
    await Promise.all(sent.map(({ outcome }) => outcome));
    expect(lost.count).toBe(1);
    expect(await numbers('count-b')).toEqual([1, 1_000, 1_001, 1_002]);
  });

  it(`decides a command at most ${MAX_ATTEMPTS} times against writers that always append first, then answers 409 with nothing of it saved`, async () => {
    const { events, lost } = losingRaces('count-c');
    const writer = writerOver(events);
    const { item, outcome } = command(counter, { command: { type: 'Count' } });
    writer.enqueue('count-c', item);
    expect(await answerOf(outcome)).toBe('conflict/concurrent_modification: The resource was changed by another request at the same time; retry');
    expect(lost.count).toBe(MAX_ATTEMPTS);
    expect(await numbers('count-c')).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => 1_000 * (i + 1)));
  });

  it('builds a built command on the current state, and again on a fresh one when another writer moved the stream on under it', async () => {
    await store.append('seq-d', numbered(5), 'no_stream');
    const builtOn: number[] = [];
    const writer = writerOver(store);
    const { item, outcome } = command(sequence, {
      build: async (state) => {
        builtOn.push(state.last);
        // Another process takes the next number while this one is built, the first time.
        if (builtOn.length === 1) await other.append('seq-d', numbered(state.last + 1), 0);
        return { command: { type: 'Take', n: state.last + 1 }, metadata: meta };
      },
    });
    await writer.build('seq-d', [item]);
    expect((await outcome).events).toEqual([{ type: 'Numbered', data: { n: 7 } }]);
    expect(builtOn).toEqual([5, 6]);
    expect(await numbers('seq-d')).toEqual([5, 6, 7]);
  });

  it('builds a built command again after a conflict at its append, on the state read afresh', async () => {
    const { events } = losingRaces('seq-e', 1);
    const builtOn: number[] = [];
    const writer = writerOver(events);
    const { item, outcome } = command(sequence, {
      build: async (state) => {
        builtOn.push(state.last);
        return { command: { type: 'Take', n: state.last + 1 }, metadata: meta };
      },
    });
    await writer.build('seq-e', [item]);
    await outcome;
    expect(builtOn).toEqual([0, 1_000]);
    expect(await numbers('seq-e')).toEqual([1_000, 1_001]);
  });

  it('built commands still valid on the state read afresh after a conflict are decided again as built, in the same order, not built again', async () => {
    await store.append('seq-k', numbered(5), 'no_stream');
    let lost = 0;
    // The other writer appends, once, a number below those taken here.
    const events = withOverrides(store, {
      append: async (...args: Parameters<EventStore['append']>) => {
        if (lost++ === 0) await other.append('seq-k', numbered(6), 0);
        return store.append(...args);
      },
    });
    const builtOn: number[] = [];
    // Each takes a number well above the last (as a message takes an id from its process's block).
    const taking = (offset: number) =>
      command(sequence, {
        build: async (state) => {
          builtOn.push(state.last);
          return { command: { type: 'Take', n: state.last + 1_000_000 + offset }, metadata: meta };
        },
      });
    const sent = [taking(1), taking(2)];
    await writerOver(events).build('seq-k', sent.map(({ item }) => item));
    expect(await Promise.all(sent.map(({ outcome }) => answerOf(outcome)))).toEqual(['ok', 'ok']);
    expect(builtOn).toEqual([5, 5]);
    expect(lost).toBe(2);
    expect(await numbers('seq-k')).toEqual([5, 6, 1_000_006, 1_000_007]);
  });

  it(`a built command that every other writer's append outdates loses ${MAX_ATTEMPTS} races at most (a conflict and the outdated state it reads are one race), then answers 409 with nothing of it saved`, async () => {
    const { events, lost } = losingRaces('seq-l');
    let builds = 0;
    const writer = writerOver(events);
    const { item, outcome } = command(sequence, {
      build: async (state) => {
        builds++;
        return { command: { type: 'Take', n: state.last + 1 }, metadata: meta };
      },
    });
    await writer.build('seq-l', [item]);
    expect(await answerOf(outcome)).toBe('conflict/concurrent_modification: The resource was changed by another request at the same time; retry');
    expect(lost.count).toBe(MAX_ATTEMPTS);
    expect(builds).toBe(MAX_ATTEMPTS);
    expect(await numbers('seq-l')).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => 1_000 * (i + 1)));
  });

  it(`builds a command at most ${MAX_ATTEMPTS} times when other writers keep moving the stream on, then answers 409 with nothing of it saved`, async () => {
    let builds = 0;
    const writer = writerOver(store);
    const { item, outcome } = command(sequence, {
      build: async (state) => {
        builds++;
        await other.append('seq-f', numbered(state.last + 1), state.last === 0 ? 'no_stream' : state.last - 1);
        return { command: { type: 'Take', n: state.last + 1 }, metadata: meta };
      },
    });
    await writer.build('seq-f', [item]);
    expect(await answerOf(outcome)).toBe('conflict/concurrent_modification: The resource was changed by another request at the same time; retry');
    expect(builds).toBe(MAX_ATTEMPTS);
    expect(await numbers('seq-f')).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
  });

  it('a command whose building fails fails alone, nothing of it saved', async () => {
    const writer = writerOver(store);
    const failing = command(sequence, { build: async () => Promise.reject(badRequest('no_number', 'No number left')) });
    const fine = command(sequence, { build: async (state) => ({ command: { type: 'Take', n: state.last + 1 }, metadata: meta }) });
    await writer.build('seq-g', [failing.item, fine.item]);
    expect(await answerOf(failing.outcome)).toBe('bad_request/no_number: No number left');
    expect(await answerOf(fine.outcome)).toBe('ok');
    expect(await numbers('seq-g')).toEqual([1]);
  });
});
