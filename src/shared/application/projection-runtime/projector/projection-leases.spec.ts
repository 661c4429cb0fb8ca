import { SqliteReadModelStore } from '../../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { LeaseLostError } from '../../../ports/read-model-store.port';
import { ProjectionDefinition } from '../../../../../projections/projection';
import { openSqliteReadModels, SqliteReadModels } from '../../../../../test/support/sqlite-stores';
import { ProjectionLeases, ProjectionLeasesOptions } from './projection-leases';
import { projectionParts } from './projection-parts';

const definition = (name: string): ProjectionDefinition => ({
  name,
  version: 1,
  collections: [],
  handles: [],
  targets: () => [],
  evolve: (document) => document,
});
const group = projectionParts(['a', 'b', 'c'].map(definition));

/** The real store on a clock the test moves; its lease writes fail while `failing`. */
class ClockedStore extends SqliteReadModelStore {
  failing = false;
  override acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    if (this.failing) return Promise.reject(new Error('disk I/O error'));
    return super.acquireLease(name, owner, ttlMs);
  }
}

describe('ProjectionLeases over a real SQLite store', () => {
  let now: number;
  let opened: SqliteReadModels<ClockedStore>;
  let store: ClockedStore;
  let leases: ProjectionLeases;
  let changes: number;
  let failures: unknown[];
  const take = (options: Partial<ProjectionLeasesOptions> = {}) =>
    (leases = new ProjectionLeases(store, group, {
      owner: 'me',
      ttlMs: 300,
      isParked: () => false,
      folding: () => ['a_v1'],
      onChanged: async () => void changes++,
      onFailed: (error) => failures.push(error),
      ...options,
    }));
  const holders = async () => Object.fromEntries([...(await store.leases(['a_v1', 'b_v1', 'c_v1']))].map(([name, lease]) => [name, lease.owner]));
  beforeEach(() => {
    now = 1_000_000;
    opened = openSqliteReadModels('parley-leases-', { clock: () => now }, (file, options) => new ClockedStore(file, options));
    store = opened.readModels;
    [changes, failures] = [0, []];
  });
  afterEach(async () => {
    leases.stopRenewing();
    jest.useRealTimers();
    await opened.close();
  });

  it('takes the free leases, leaves those held by another, and keeps a parked projection held without folding it', async () => {
    expect(await store.acquireLease('b_v1', 'other', 300)).toBe(true);
    take({ isParked: (name) => name === 'c_v1' });
    expect((await leases.acquire()).map((part) => part.definition.name)).toEqual(['a']);
    expect(await holders()).toEqual({ a_v1: 'me', b_v1: 'other', c_v1: 'me' });
    expect(leases.fences(['a_v1', 'c_v1'])).toEqual([
      { name: 'a_v1', owner: 'me' },
      { name: 'c_v1', owner: 'me' },
    ]);
  });

  it('renews every third of the lease time, and says when the leases it can fold changed', async () => {
    jest.useFakeTimers();
    expect(await store.acquireLease('b_v1', 'other', 300)).toBe(true);
    take({ isParked: (name) => name === 'c_v1' });
    await leases.acquire();
    leases.startRenewing();
    leases.startRenewing(); // one timer however often started

    now += 100;
    await jest.advanceTimersByTimeAsync(100);
    expect(changes).toBe(0);
    expect((await store.leases(['a_v1'])).get('a_v1')?.expiresAtMs).toBe(now + 300);

    now += 300; // the other owner stopped renewing: its lease ran out
    await jest.advanceTimersByTimeAsync(100);
    expect(changes).toBe(1);
    expect(await holders()).toEqual({ a_v1: 'me', b_v1: 'me', c_v1: 'me' });
    expect(failures).toEqual([]);
  });

  it('reports a renewal that fails, and renews no more once stopped', async () => {
    jest.useFakeTimers();
    take();
    await leases.acquire();
    leases.startRenewing();
    store.failing = true;
    await jest.advanceTimersByTimeAsync(100);
    expect(failures.map(String)).toEqual(['Error: disk I/O error']);

    store.failing = false;
    leases.stopRenewing();
    const before = (await store.leases(['a_v1'])).get('a_v1')!.expiresAtMs;
    now += 1_000;
    await jest.advanceTimersByTimeAsync(1_000);
    expect((await store.leases(['a_v1'])).get('a_v1')!.expiresAtMs).toBe(before);
    expect(changes).toBe(0);
  });

  it('renews while folding once a third of the lease time has passed, not before, and not once stopped', async () => {
    jest.useFakeTimers(); // the timer never fires here: a synchronous fold lets none run
    take({ now: () => now, folding: () => ['a_v1', 'b_v1', 'c_v1'] });
    await leases.acquire();
    leases.startRenewing();
    const expiry = async () => (await store.leases(['a_v1'])).get('a_v1')!.expiresAtMs;

    now += 99;
    expect(leases.keepWhileFolding()).toBeNull();
    expect(await expiry()).toBe(now - 99 + 300);
    now += 1;
    await leases.keepWhileFolding();
    expect(await expiry()).toBe(now + 300);
    expect(leases.keepWhileFolding()).toBeNull();

    leases.stopRenewing();
    now += 200;
    expect(leases.keepWhileFolding()).toBeNull();
    expect(changes).toBe(0);
  });

  it('stops the fold with LeaseLostError once a lease it folds is held by another, until the next claim', async () => {
    jest.useFakeTimers();
    take({ now: () => now });
    await leases.acquire();
    leases.startRenewing();
    now += 400; // the fold outlasted the lease, and another owner took it meanwhile
    expect(await store.acquireLease('a_v1', 'other', 300)).toBe(true);

    await expect(leases.keepWhileFolding()).rejects.toEqual(new LeaseLostError('a_v1', 'me'));
    expect(changes).toBe(1);
    // Not due again, still lost: the fold writes nothing more under it.
    await expect(leases.keepWhileFolding()).rejects.toBeInstanceOf(LeaseLostError);

    now += 400; // the other owner's lease ran out: the next claim takes it afresh
    expect((await leases.acquire()).map((part) => part.checkpoint)).toEqual(['a_v1', 'b_v1', 'c_v1']);
    expect(leases.keepWhileFolding()).toBeNull();
  });

  it('stops the fold with the failure of a renewal it asked for', async () => {
    jest.useFakeTimers();
    take({ now: () => now });
    await leases.acquire();
    leases.startRenewing();
    now += 100;
    store.failing = true;
    await expect(leases.keepWhileFolding()).rejects.toThrow('disk I/O error');
    store.failing = false;
    await leases.keepWhileFolding(); // still due: tried again
    expect((await store.leases(['a_v1'])).get('a_v1')!.expiresAtMs).toBe(now + 300);
  });

  it('releases leases, so another owner takes them at once', async () => {
    take();
    await leases.acquire();
    expect(await store.acquireLease('a_v1', 'other', 300)).toBe(false);
    await leases.release(['a_v1', 'b_v1', 'c_v1']);
    expect(await holders()).toEqual({});
    expect(await store.acquireLease('a_v1', 'other', 300)).toBe(true);
  });
});
