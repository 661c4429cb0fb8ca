import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { Decider } from '../../domain/decider';
import { DomainError } from '../../domain/errors';
import { DomainEvent } from '../../domain/event';
import { INSTANCE_WIPED, instanceWipesStream } from '../../domain/instance-wipe';
import { EventToAppend, WrongExpectedRevisionError } from '../../ports/event-store.port';
import { CountingStore } from '../../../../test/support/counting-event-store';
import { EventLoopTurn } from './event-loop-turn';
import { InstanceEpochs } from './instance-epochs';
import { StreamStates } from './stream-states';

type Counted = DomainEvent<'Counted', { n: number }>;
/** Its state is the newest count: any event starts it (so it can be read backwards). */
const counter: Decider<{ n: number }, never, Counted> = {
  initialState: () => ({ n: 0 }),
  evolve: (_state, event) => ({ n: event.data.n }),
  decide: () => [],
};
const tailCounter = { ...counter, foldsFrom: () => true };
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const counted = (...ns: number[]): EventToAppend[] => ns.map((n) => ({ type: 'Counted', data: { n }, metadata: meta }));

/**
 * A turn of the event loop that lasts until the test lets the loop turn (`turnPasses`), so that
 * "within one turn" does not depend on how long the store's I/O takes.
 */
const heldTurn = () => {
  const ends: (() => void)[] = [];
  return { turn: new EventLoopTurn((end) => void ends.push(end)), turnPasses: () => ends.splice(0).forEach((end) => end()) };
};

describe('StreamStates: a state is served from memory only within the turn of the event loop in which its stream was read to its end', () => {
  let dir: string;
  let store: SqliteEventStore;
  /** Another process writing to the same log. */
  let other: SqliteEventStore;
  let counting: CountingStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-states-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    other = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    counting = new CountingStore(store);
  });
  afterEach(async () => {
    await other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('within one turn, a stream read to its end is not read again, however many loads ask for it', async () => {
    await store.append('count-a', counted(1, 2), 'no_stream');
    const { turn } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    const first = await states.load('count-a', counter);
    counting.reset();
    for (let i = 0; i < 3; i++) expect(await states.load('count-a', counter)).toBe(first);
    expect(counting.reads).toBe(0);
    expect(first).toMatchObject({ state: { n: 2 }, revision: 1 });
  });

  it("a state served within the turn may be behind another process's append, but carries the revision it was read at: an append decided on it fails, overwriting nothing", async () => {
    await store.append('count-b', counted(1), 'no_stream');
    const { turn } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    await states.load('count-b', counter);
    await other.append('count-b', counted(2), 0);

    const served = await states.load('count-b', counter);
    expect(served).toMatchObject({ state: { n: 1 }, revision: 0 });
    await expect(store.append('count-b', counted(2), served.revision)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect((await store.readStream('count-b')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('from the next turn the stream is read again, on from the revision in memory (only the newer events)', async () => {
    await store.append('count-c', counted(1, 2, 3), 'no_stream');
    const { turn, turnPasses } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    await states.load('count-c', counter);
    await other.append('count-c', counted(4), 2);
    turnPasses();
    counting.reset();
    expect(await states.load('count-c', counter)).toMatchObject({ state: { n: 4 }, revision: 3 });
    expect(counting.reads).toBe(1);
    expect(counting.eventsRead).toBe(1);
  });

  it('in a later turn, a stream is not read again while nothing was appended to it since its read (streamVersion), whatever this process appended elsewhere', async () => {
    await store.append('count-i', counted(1, 2), 'no_stream');
    const { turn, turnPasses } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    const first = await states.load('count-i', counter);
    await store.append('count-i-elsewhere', counted(1), 'no_stream');
    turnPasses();
    counting.reset();
    expect(await states.load('count-i', counter)).toBe(first);
    expect(counting.reads).toBe(0);
  });

  it("in a later turn, an append to the stream since its read by this store (not only the pipeline's), or any append by another process, has it read again", async () => {
    await store.append('count-j', counted(1), 'no_stream');
    const { turn, turnPasses } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    await states.load('count-j', counter);
    await store.append('count-j', counted(2), 0);
    turnPasses();
    expect((await states.load('count-j', counter)).state).toEqual({ n: 2 });
    await other.append('elsewhere', counted(1), 'no_stream');
    await other.append('count-j', counted(3), 1);
    turnPasses();
    counting.reset();
    expect((await states.load('count-j', counter)).state).toEqual({ n: 3 });
    expect(counting.reads).toBe(1);
  });

  it("the state an append left, stamped with the stream's version after it, is not read again while nothing more is appended to the stream", async () => {
    await store.append('count-k', counted(1), 'no_stream');
    const { turn, turnPasses } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    await states.load('count-k', counter);
    const result = await store.append('count-k', counted(2), 0);
    expect(result.streamVersion).toBeDefined();
    states.appended('count-k', { n: 2 }, result.nextExpectedRevision, null, result.streamVersion);
    turnPasses();
    counting.reset();
    expect(await states.load('count-k', counter)).toMatchObject({ state: { n: 2 }, revision: 1 });
    expect(counting.reads).toBe(0);
    // Another append to it, even one that does not go through these states, has it read again.
    await store.append('count-k', counted(3), 1);
    turnPasses();
    expect((await states.load('count-k', counter)).state).toEqual({ n: 3 });
    expect(counting.reads).toBe(1);
  });

  it('two appends to one stream committed together are not stamped: neither state alone is the whole stream', async () => {
    const [first, second] = await Promise.all([store.append('count-l', counted(1), 'no_stream'), store.append('count-l', counted(2), 0)]);
    expect(second.nextExpectedRevision).toBe(1);
    expect(first.streamVersion).toBeUndefined();
    expect(second.streamVersion).toBeUndefined();
  });

  it('the event loop ends the turn by itself: what another process appended meanwhile is read', async () => {
    await store.append('count-d', counted(1), 'no_stream');
    const states = new StreamStates(store);
    await states.load('count-d', counter);
    await other.append('count-d', counted(2), 0);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await states.load('count-d', counter)).state).toEqual({ n: 2 });
  });

  it("an append by this process ends the turn (endTurn): the next load reads again and sees it", async () => {
    await store.append('count-e', counted(1), 'no_stream');
    const { turn } = heldTurn();
    const states = new StreamStates(store, undefined, turn);
    await states.load('count-e', counter);
    await store.append('count-e', counted(2), 0);
    states.endTurn();
    expect((await states.load('count-e', counter)).state).toEqual({ n: 2 });
  });

  it("the state an append left (appended) is read on from its revision at the next load, with what another process appended after it", async () => {
    await store.append('count-f', counted(1), 'no_stream');
    const { turn } = heldTurn();
    const states = new StreamStates(counting.events, undefined, turn);
    await states.load('count-f', counter);
    const { nextExpectedRevision } = await store.append('count-f', counted(2), 0);
    states.appended('count-f', { n: 2 }, nextExpectedRevision, null);
    await other.append('count-f', counted(3), nextExpectedRevision);
    counting.reset();
    expect(await states.load('count-f', counter)).toMatchObject({ state: { n: 3 }, revision: 2 });
    expect(counting.eventsRead).toBe(1);
  });

  it('a wipe recorded since the state was folded discards it at once, within the same turn', async () => {
    await store.append('count-acme.g', counted(1, 2), 'no_stream');
    const epochs = new InstanceEpochs(store);
    const { turn } = heldTurn();
    const states = new StreamStates(store, epochs, turn);
    expect((await states.load('count-acme.g', counter)).state).toEqual({ n: 2 });
    const wiped = await store.append(instanceWipesStream('acme'), [{ type: INSTANCE_WIPED, data: {}, metadata: meta }], 'no_stream');
    epochs.record('acme', wiped.position);
    // Folded afresh from after the wipe; the wiped events still count for the revision.
    expect(await states.load('count-acme.g', counter)).toMatchObject({ state: { n: 0 }, revision: 1 });
  });

  it('a stream not in memory is read backwards to the newest event its state starts from, not from its start', async () => {
    await store.append('count-h', counted(...Array.from({ length: 200 }, (_, i) => i + 1)), 'no_stream');
    const states = new StreamStates(counting.events);
    counting.reset();
    expect(await states.load('count-h', tailCounter)).toMatchObject({ state: { n: 200 }, revision: 199 });
    expect(counting.eventsRead).toBeLessThanOrEqual(16);
  });

  it('a log that cannot be read says nothing was changed', async () => {
    const states = new StreamStates(store);
    await store.close();
    const error = await states.load('count-i', counter).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).description).toBe(
      'The event log could not be read: the event log is closed; nothing was changed, it is safe to retry',
    );
  });
});
