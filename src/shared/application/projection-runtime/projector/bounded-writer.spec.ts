import { SqliteReadModelStore } from '../../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { BatchTooLargeError, DocumentChange, LeaseFence, LeaseLostError } from '../../../ports/read-model-store.port';
import { openSqliteReadModels, SqliteReadModels } from '../../../../../test/support/sqlite-stores';
import { BoundedWriter } from './bounded-writer';

const at = (n: number) => String(n).padStart(20, '0');
const puts = (from: number, count: number): DocumentChange[] =>
  Array.from({ length: count }, (_, i) => ({ collection: 'docs', kind: 'put', document: { _id: `d${from + i}` }, position: at(from + i) }));

/** The real store, refusing writes of more than `refuseOver` changes as MongoDB refuses a transaction too large. */
class RefusingStore extends SqliteReadModelStore {
  refuseOver = Infinity;
  refused = 0;
  readonly writes: { changes: number; checkpoints: number }[] = [];
  override async applyBatch(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, string>>, fences?: readonly LeaseFence[]) {
    if (changes.length > this.refuseOver) {
      this.refused++;
      throw new BatchTooLargeError(`${changes.length} changes are too many`);
    }
    await super.applyBatch(changes, checkpoints, fences);
    this.writes.push({ changes: changes.length, checkpoints: Object.keys(checkpoints).length });
  }
}

describe('BoundedWriter over a real SQLite read-model store', () => {
  let opened: SqliteReadModels<RefusingStore>;
  let store: RefusingStore;
  const open = async (batchLimit?: { changes: number; bytes: number }) => {
    opened = openSqliteReadModels('parley-bounded-writer-', { batchLimit }, (file, options) => new RefusingStore(file, options));
    store = opened.readModels;
    await store.ensureCollections([{ name: 'docs' }]);
  };
  afterEach(() => opened.close());

  it("writes in parts of the store's bound, the checkpoints with the last part", async () => {
    await open({ changes: 2, bytes: 1_000_000 });
    await new BoundedWriter(store).write(puts(1, 5), { p_v1: at(5) });
    expect(store.writes).toEqual([
      { changes: 2, checkpoints: 0 },
      { changes: 2, checkpoints: 0 },
      { changes: 1, checkpoints: 1 },
    ]);
    expect(await store.count('docs')).toBe(5);
    expect(await store.getCheckpoint('p_v1')).toBe(at(5));
  });

  it('writes checkpoints alone when there is no change', async () => {
    await open();
    await new BoundedWriter(store).write([], { p_v1: at(3) });
    expect(store.writes).toEqual([{ changes: 0, checkpoints: 1 }]);
  });

  it('halves a part the store refuses as too large, and keeps the halved bound for later writes', async () => {
    await open();
    store.refuseOver = 3;
    const writer = new BoundedWriter(store);
    await writer.write(puts(1, 10), { p_v1: at(10) });
    expect(store.refused).toBe(2); // 10, then 5
    expect(store.writes.map((w) => w.changes)).toEqual([2, 2, 2, 2, 2]);
    expect(writer.bound).toBe(2);
    expect(await store.count('docs')).toBe(10);

    store.writes.length = 0;
    await writer.write(puts(11, 3), {});
    expect(store.writes.map((w) => w.changes)).toEqual([2, 1]);
    expect(store.refused).toBe(2);
  });

  it('gives up when the store refuses a single change, and on any other error, writing nothing more', async () => {
    await open();
    store.refuseOver = 0;
    await expect(new BoundedWriter(store).write(puts(1, 1), { p_v1: at(1) })).rejects.toBeInstanceOf(BatchTooLargeError);

    store.refuseOver = Infinity;
    expect(await store.acquireLease('p_v1', 'someone-else', 60_000)).toBe(true);
    const fenced = new BoundedWriter(store, [{ name: 'p_v1', owner: 'me' }]);
    await expect(fenced.write(puts(1, 4), { p_v1: at(4) })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.count('docs')).toBe(0);
    expect(await store.getCheckpoint('p_v1')).toBeNull();
  });
});
