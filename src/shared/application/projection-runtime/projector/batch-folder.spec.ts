import { SqliteReadModelStore } from '../../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { LogPosition, RecordedEvent } from '../../../domain/event';
import { DocumentChange, LeaseFence, LeaseLostError, Query } from '../../../ports/read-model-store.port';
import { physicalCollectionSpecs, ProjectionDefinition } from '../../../../../projections/projection';
import { openSqliteReadModels, SqliteReadModels } from '../../../../../test/support/sqlite-stores';
import { BatchFolder, BatchFolderOptions } from './batch-folder';
import { ProjectionEventError } from './projection-event-error';
import { projectionSlot } from './projection-slot';

const at = (n: number): LogPosition => String(n).padStart(20, '0');
const event = (n: number, streamName: string, type: string, data: Record<string, unknown> = {}): RecordedEvent => ({
  id: `e${n}`,
  streamName,
  revision: 0,
  position: at(n),
  type,
  data,
  metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
  recordedAt: '2026-01-01T00:00:00.000Z',
});
const tick = (n: number, stream: string, data: Record<string, unknown> = {}) => event(n, stream, 'Tick', { group: 'g1', ...data });

/** Counts ticks per stream (by key) in a group; `Clear` removes a group's counts (a selection). `bad` fails evolve, `badTargets` targets. */
const counter: ProjectionDefinition = {
  name: 'counter',
  version: 1,
  collections: [{ name: 'counts' }],
  handles: ['Tick', 'Clear'],
  targets: (e) => {
    const data = e.data as { group: string; badTargets?: boolean };
    if (data.badTargets) throw new Error('no targets');
    return e.type === 'Clear' ? [{ collection: 'counts', where: { group: data.group } }] : [{ collection: 'counts', id: e.streamName }];
  },
  evolve: (document, e) => {
    const data = e.data as { group: string; bad?: boolean };
    if (data.bad) throw new Error('bad tick');
    if (e.type === 'Clear') return null;
    return { _id: '', group: data.group, n: ((document?.n as number | undefined) ?? 0) + 1 };
  },
};

/** One document per tick, whatever its data. */
const ticks: ProjectionDefinition = {
  name: 'ticks',
  version: 1,
  collections: [{ name: 'ticks' }],
  handles: ['Tick'],
  targets: (e) => [{ collection: 'ticks', id: e.position }],
  evolve: (_document, e) => ({ _id: '', stream: e.streamName }),
};

/**
 * Counts ticks per stream; a `Total` event ticks its stream too, then sums the group's counts
 * into `total`, reading them (`reads`): what the batch folded before, its own tick included.
 */
const tally: ProjectionDefinition = {
  name: 'tally',
  version: 1,
  collections: [{ name: 'tallies' }],
  handles: ['Tick', 'Total'],
  targets: (e) =>
    e.type === 'Tick'
      ? [{ collection: 'tallies', id: e.streamName }]
      : [
          { collection: 'tallies', id: e.streamName },
          { collection: 'tallies', id: 'total', reads: [{ collection: 'tallies', where: { group: 'g1' }, sort: [{ field: 'n', descending: true }], limit: 10 }] },
        ],
  evolve: (document, e, target, read = []) =>
    target.id === 'total'
      ? { _id: '', sum: read[0].reduce((sum, d) => sum + (d.n as number), 0), largest: read[0][0]?._id }
      : { _id: '', group: 'g1', n: ((document?.n as number | undefined) ?? 0) + 1 },
};

/** The real store, noting its reads and writes. */
class NotingStore extends SqliteReadModelStore {
  readonly writes: { changes: number; checkpoints: Record<string, string> }[] = [];
  readonly keyReads: { collection: string; ids: readonly string[] }[] = [];
  readonly selections: string[] = [];
  override async applyBatch(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, string>>, fences?: readonly LeaseFence[]) {
    await super.applyBatch(changes, checkpoints, fences);
    this.writes.push({ changes: changes.length, checkpoints: { ...checkpoints } });
  }
  override getStoredMany<D extends { _id: string }>(collection: string, ids: readonly string[]) {
    this.keyReads.push({ collection, ids: [...ids] });
    return super.getStoredMany<D>(collection, ids);
  }
  override findStored<D extends { _id: string }>(collection: string, query?: Query) {
    this.selections.push(collection);
    return super.findStored<D>(collection, query);
  }
}

describe('BatchFolder over a real SQLite read-model store', () => {
  let opened: SqliteReadModels<NotingStore>;
  let store: NotingStore;
  const failures: ProjectionEventError[] = [];
  let partialWrites = 0;
  const open = async (batchLimit?: { changes: number; bytes: number }) => {
    opened = openSqliteReadModels('parley-batch-folder-', { batchLimit }, (file, options) => new NotingStore(file, options));
    store = opened.readModels;
    await store.ensureCollections([counter, ticks].flatMap(physicalCollectionSpecs));
  };
  const folder = (options: Partial<BatchFolderOptions> = {}) =>
    new BatchFolder(store, {
      onProjectionFailed: (error) => failures.push(error),
      onPartialWrite: () => partialWrites++,
      ...options,
    });
  const counts = async () => Object.fromEntries((await store.find('counts_v1')).map((d) => [d._id, d.n]));
  beforeEach(() => {
    failures.length = 0;
    partialWrites = 0;
  });
  afterEach(() => opened.close());

  it('folds a batch in memory and writes its documents with every checkpoint in one write', async () => {
    await open();
    const slots = [projectionSlot(counter, null), projectionSlot(ticks, null)];
    const applied = await folder().fold([tick(1, 'a'), tick(2, 'b'), tick(3, 'a')], slots);

    expect(applied).toBe(6);
    expect(store.writes).toEqual([{ changes: 5, checkpoints: { counter_v1: at(3), ticks_v1: at(3) } }]);
    expect(await counts()).toEqual({ a: 2, b: 1 });
    expect(await store.getStored('counts_v1', 'a')).toEqual({ document: { _id: 'a', group: 'g1', n: 2 }, position: at(3) });
    expect(slots.map((s) => [s.position, s.stats])).toEqual([
      [at(3), { events: 3, documents: 2 }],
      [at(3), { events: 3, documents: 3 }],
    ]);
    expect(await store.getCheckpoint('counter_v1')).toBe(at(3));
    expect(partialWrites).toBe(0);
  });

  it('reads the documents a batch names by key in one query per collection, and skips events a document already reflects', async () => {
    await open();
    await folder().fold([tick(1, 'a'), tick(2, 'b')], [projectionSlot(counter, null)]);
    store.keyReads.length = 0;

    // Redelivered from the start, as after a rewound checkpoint: only event 3 is new to its document.
    await folder().fold([tick(1, 'a'), tick(2, 'b'), tick(3, 'a')], [projectionSlot(counter, null)]);
    expect(store.keyReads).toEqual([{ collection: 'counts_v1', ids: ['a', 'b'] }]);
    expect(store.selections).toEqual([]);
    expect(await counts()).toEqual({ a: 2, b: 1 });
  });

  it('skips the events before a projection’s position', async () => {
    await open();
    const slot = projectionSlot(counter, at(2));
    await folder().fold([tick(1, 'a'), tick(2, 'a'), tick(3, 'a')], [slot]);
    expect(await counts()).toEqual({ a: 1 });
    expect(slot.stats.events).toBe(1);
  });

  it('writes what it folded before a selection first, so the selection sees it', async () => {
    await open();
    const slot = projectionSlot(counter, null);
    await folder().fold([tick(1, 'a'), tick(2, 'b', { group: 'g2' }), event(3, 'clear', 'Clear', { group: 'g1' }), tick(4, 'c')], [slot]);

    expect(await counts()).toEqual({ b: 1, c: 1 });
    expect(store.writes).toEqual([
      { changes: 2, checkpoints: { counter_v1: at(2) } },
      { changes: 2, checkpoints: { counter_v1: at(4) } },
    ]);
    expect(partialWrites).toBe(1);
  });

  it("hands evolve a target's reads, made once what the batch folded before (this event's earlier targets too) is written", async () => {
    await open();
    await store.ensureCollections(physicalCollectionSpecs(tally));
    const slot = projectionSlot(tally, null);
    await folder().fold([tick(1, 'a'), tick(2, 'b'), tick(3, 'b'), event(4, 'c', 'Total'), tick(5, 'c')], [slot]);

    expect(await store.get('tallies_v1', 'total')).toEqual({ _id: 'total', sum: 4, largest: 'b' });
    expect((await store.get('tallies_v1', 'c'))?.n).toBe(2);
    expect(store.writes).toEqual([
      { changes: 3, checkpoints: { tally_v1: at(3) } },
      { changes: 2, checkpoints: { tally_v1: at(5) } },
    ]);
    expect(partialWrites).toBe(1);
  });

  it('stops a projection that fails on an event just before it, alone: the others fold the whole batch', async () => {
    await open();
    const [failing, other] = [projectionSlot(counter, null), projectionSlot(ticks, null)];
    await folder().fold([tick(1, 'a'), tick(2, 'a', { bad: true }), tick(3, 'b'), tick(4, 'a')], [failing, other]);

    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(ProjectionEventError);
    expect(failures[0]).toMatchObject({ projection: 'counter_v1', event: { position: at(2) } });
    expect(failures[0].message).toContain('bad tick');
    expect(await counts()).toEqual({ a: 1 });
    expect([failing.position, other.position]).toEqual([at(1), at(4)]);
    expect(await store.getCheckpoint('counter_v1')).toBe(at(1));
    expect(await store.count('ticks_v1')).toBe(4);
  });

  it('reports the earliest failing event, whether its targets or its evolve threw', async () => {
    await open();
    await folder().fold([tick(1, 'a'), tick(2, 'a', { badTargets: true }), tick(3, 'a', { bad: true })], [projectionSlot(counter, null)]);
    await folder().fold([tick(4, 'b', { bad: true }), tick(5, 'b', { badTargets: true })], [projectionSlot(counter, at(3))]);
    expect(failures.map((f) => [f.event.position, f.message.replace(/.*: /, '')])).toEqual([
      [at(2), 'no targets'],
      [at(4), 'bad tick'],
    ]);
  });

  it('reads no document of a collection it started empty unless it wrote that id', async () => {
    await open();
    const slot = projectionSlot(counter, null);
    const fresh = folder({ startedEmpty: ['counts_v1'] });
    await fresh.fold([tick(1, 'a')], [slot]);
    await fresh.fold([tick(2, 'a'), tick(3, 'b')], [slot]);

    expect(store.keyReads).toEqual([{ collection: 'counts_v1', ids: ['a'] }]);
    expect(await counts()).toEqual({ a: 2, b: 1 });
  });

  it("writes within the store's bound, within an event if need be, each checkpoint with the write that completes its events", async () => {
    await open({ changes: 2, bytes: 1_000_000 });
    await folder().fold([tick(1, 'a'), tick(2, 'b'), tick(3, 'c'), tick(4, 'd'), tick(5, 'e')], [projectionSlot(counter, null)]);

    expect(store.writes).toEqual([
      { changes: 2, checkpoints: { counter_v1: at(1) } },
      { changes: 2, checkpoints: { counter_v1: at(3) } },
      { changes: 1, checkpoints: { counter_v1: at(5) } },
    ]);
    expect(partialWrites).toBe(2);
    expect(await counts()).toEqual({ a: 1, b: 1, c: 1, d: 1, e: 1 });
  });

  it('writes nothing under a lease it no longer holds', async () => {
    await open();
    expect(await store.acquireLease('counter_v1', 'someone-else', 60_000)).toBe(true);
    const fenced = folder({ fences: [{ name: 'counter_v1', owner: 'me' }] });
    await expect(fenced.fold([tick(1, 'a')], [projectionSlot(counter, null)])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await counts()).toEqual({});
    expect(await store.getCheckpoint('counter_v1')).toBeNull();
  });
});
