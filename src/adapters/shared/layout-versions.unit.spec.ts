import { LayoutMigration, LayoutVersionRecord, migrateLayout } from './layout-versions';
import { NewerVersionError } from './stored-versions';

/**
 * The layout-version mechanism the MongoDB and EventStoreDB stores share, on a record kept in
 * memory (the stores' own records are exercised by their contract suites, where a server runs:
 * test/contract/layout-versions.spec.ts).
 */
class MemoryRecord implements LayoutVersionRecord {
  readonly name = 'the test store';
  readonly writes: [number, number][] = [];
  /** Runs before a write compares versions: another process recording meanwhile. */
  beforeWrite: (() => void) | null = null;
  constructor(public version: number) {}
  async read(): Promise<number> {
    return this.version;
  }
  async write(from: number, to: number): Promise<boolean> {
    this.beforeWrite?.();
    this.beforeWrite = null;
    if (this.version !== from) return false;
    this.writes.push([from, to]);
    this.version = to;
    return true;
  }
}

const steps = (count: number, ran: number[]): LayoutMigration[] =>
  Array.from({ length: count }, (_, i) => ({ version: i + 1, description: `step ${i + 1}`, up: async () => void ran.push(i + 1) }));

describe('layout versions of the stores that are not files (MongoDB, EventStoreDB)', () => {
  it('records version 1 on a store with none recorded (a new one, or one written before versions were recorded)', async () => {
    const ran: number[] = [];
    const record = new MemoryRecord(0);
    expect(await migrateLayout(record, steps(1, ran))).toEqual({ from: 0, to: 1 });
    expect(ran).toEqual([1]);
    expect(record.version).toBe(1);
  });

  it('brings an older layout forward one step at a time, recording each', async () => {
    const ran: number[] = [];
    const record = new MemoryRecord(1);
    expect(await migrateLayout(record, steps(3, ran))).toEqual({ from: 1, to: 3 });
    expect(ran).toEqual([2, 3]);
    expect(record.writes).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });

  it('only reads a store already at the newest version', async () => {
    const ran: number[] = [];
    const record = new MemoryRecord(2);
    expect(await migrateLayout(record, steps(2, ran))).toEqual({ from: 2, to: 2 });
    expect(ran).toEqual([]);
    expect(record.writes).toEqual([]);
  });

  it('refuses a newer layout, naming the store and both versions, and leaves it as it was', async () => {
    const ran: number[] = [];
    const record = new MemoryRecord(3);
    const refused = migrateLayout(record, steps(2, ran));
    await expect(refused).rejects.toBeInstanceOf(NewerVersionError);
    await expect(refused).rejects.toThrow(
      'the test store has layout version 3, newer than this Parley knows (up to version 2): a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    expect(ran).toEqual([]);
    expect(record.version).toBe(3);
  });

  it('refuses a version no release writes', async () => {
    await expect(migrateLayout(new MemoryRecord(-1), steps(1, []))).rejects.toThrow('the test store has layout version -1, which no release of Parley writes');
  });

  it('goes on from what another process recorded meanwhile, and never records over it', async () => {
    const ran: number[] = [];
    const record = new MemoryRecord(0);
    // Another process starting at the same moment records steps 1 and 2 first.
    record.beforeWrite = () => (record.version = 2);
    expect(await migrateLayout(record, steps(3, ran))).toEqual({ from: 0, to: 3 });
    expect(ran).toEqual([1, 3]);
    expect(record.writes).toEqual([[2, 3]]);
  });

  it('a newer version recorded meanwhile by a newer release is refused', async () => {
    const record = new MemoryRecord(0);
    record.beforeWrite = () => (record.version = 5);
    await expect(migrateLayout(record, steps(2, []))).rejects.toThrow(/has layout version 5, newer than this Parley knows \(up to version 2\)/);
    expect(record.version).toBe(5);
  });

  it('a step that fails leaves its version unrecorded, so the next start runs it again', async () => {
    const record = new MemoryRecord(1);
    const failing: LayoutMigration[] = [
      ...steps(1, []),
      {
        version: 2,
        description: 'fails',
        up: async () => {
          throw new Error('disk full');
        },
      },
    ];
    await expect(migrateLayout(record, failing)).rejects.toThrow('disk full');
    expect(record.version).toBe(1);
  });

  it('a list numbered other than 1, 2, 3… is a programming error', async () => {
    const misnumbered: LayoutMigration[] = [{ version: 2, description: 'x', up: async () => undefined }];
    await expect(migrateLayout(new MemoryRecord(0), misnumbered)).rejects.toThrow('layout migrations must be numbered 1, 2, 3…: step 1 says 2');
  });
});
