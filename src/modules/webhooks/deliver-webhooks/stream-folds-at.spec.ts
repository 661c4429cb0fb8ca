import type { LogPosition } from '../../../shared/domain/event';
import { CountingStore } from '../../../../test/support/counting-event-store';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { StreamFoldsAt } from './stream-folds-at';

/** Incremental folds of a real SQLite log's streams: what is read, and what is kept. */
describe('StreamFoldsAt', () => {
  let stores: SqliteStores;
  let counting: CountingStore;
  let folds: StreamFoldsAt<string[]>;
  const append = async (stream: string, value: string): Promise<LogPosition> =>
    (await stores.events.append(stream, [{ type: 'Noted', data: { value }, metadata: { occurred_at: '2026-03-01T10:00:00.000Z' } }], 'any')).position;
  const read = async (stream: string, position: LogPosition) => {
    counting.reset();
    const state = await folds.at(stream, position);
    return { state, eventsRead: counting.eventsRead };
  };

  beforeEach(() => {
    stores = openSqliteStores('parley-stream-folds-');
    counting = new CountingStore(stores.events);
    folds = new StreamFoldsAt<string[]>(counting.events, { cached: 10, initial: () => [], evolve: (s, e) => [...s, (e.data as { value: string }).value] });
  });
  afterEach(() => stores.close());

  it('folds only what a stream gained since the kept fold, and from the start for a position before it (never past the position asked)', async () => {
    const a = await append('note-i1.x', 'a');
    await append('note-i1.y', 'other');
    const b = await append('note-i1.x', 'b');
    const c = await append('note-i1.x', 'c');
    expect(await read('note-i1.x', b)).toEqual({ state: ['a', 'b'], eventsRead: 3 }); // c read, not folded
    expect(await read('note-i1.x', c)).toEqual({ state: ['a', 'b', 'c'], eventsRead: 1 });
    expect(await read('note-i1.x', c)).toEqual({ state: ['a', 'b', 'c'], eventsRead: 0 });
    expect(await read('note-i1.x', a)).toEqual({ state: ['a'], eventsRead: 3 });
    expect(await read('note-i1.x', c)).toEqual({ state: ['a', 'b', 'c'], eventsRead: 2 });
  });

  it.each([
    ['its stream', { stream: 'note-i1.x' }],
    ['its instance', { instanceId: 'i1' }],
  ])('keeps no fold that ends before a destroy of %s (what it read may have been opened before the keys went)', async (_, at) => {
    const a = await append('note-i1.x', 'a');
    const other = await append('note-i2.x', 'other');
    await read('note-i1.x', a);
    await read('note-i2.x', other);
    const destroyedAt = await append('note-i1.z', 'destroy');
    folds.destroyed(at, destroyedAt);
    expect((await read('note-i1.x', a)).eventsRead).toBe(1);
    expect((await read('note-i1.x', a)).eventsRead).toBe(1); // read again: not kept
    expect((await read('note-i2.x', other)).eventsRead).toBe(0); // another instance's: still kept
    const b = await append('note-i1.x', 'b');
    expect(await read('note-i1.x', b)).toEqual({ state: ['a', 'b'], eventsRead: 2 });
    expect(await read('note-i1.x', b)).toEqual({ state: ['a', 'b'], eventsRead: 0 }); // past the destroy: kept
  });
});
