import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ALL_PROJECTIONS } from '../../../../projections';
import { checkpointName } from '../../../../projections/projection';
import { usersProjection } from '../../../../projections/users/users.projection';
import { LogPosition } from '../../domain/event';
import { DomainError } from '../../domain/errors';
import { PROJECTOR_STATUS } from './projector-runner';
import { ProjectionVersions } from './projection-versions';
import { ProjectionWatch } from './projection-watch';
import { eventually } from '../../../../test/support/waiting';

const pos = (i: number): LogPosition => String(i).padStart(20, '0');
const ALL = ALL_PROJECTIONS.map(checkpointName);

/** The real store, counting how stored checkpoints are read (to show the cost of a poll, not to mock). */
class CountingCheckpoints extends SqliteReadModelStore {
  single = 0;
  batched: string[][] = [];
  override async getCheckpoint(projection: string) {
    this.single++;
    return super.getCheckpoint(projection);
  }
  override async getCheckpoints(projections: readonly string[]) {
    this.batched.push([...projections]);
    return super.getCheckpoints(projections);
  }
}

/** How a wait ended: `resolved`, or the error's reason and description. */
const outcome = (wait: Promise<void>) =>
  wait.then(
    () => 'resolved',
    (error: unknown) => (error instanceof DomainError ? `${error.reason}: ${error.description}` : String(error)),
  );

describe('ProjectionWatch in a process that folds nothing itself (an API process beside workers)', () => {
  let dir: string;
  let store: CountingCheckpoints;
  const watches: ProjectionWatch[] = [];
  const watch = (timeoutMs = 600_000, versions?: ProjectionVersions) => {
    const w = new ProjectionWatch(store, ALL, null, timeoutMs, 10, versions);
    watches.push(w);
    return w;
  };
  const moveAll = (to: LogPosition, except: readonly string[] = []) =>
    store.applyBatch([], Object.fromEntries(ALL.filter((n) => !except.includes(n)).map((n) => [n, to])));
  const park = (checkpoint: string) =>
    store.applyBatch(
      [{ collection: PROJECTOR_STATUS, kind: 'put', document: { _id: checkpoint, state: 'parked', error: 'malformed', event_position: pos(4) }, position: pos(4) }],
      {},
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-watch-'));
    store = new CountingCheckpoints(join(dir, 'read-models.sqlite'));
    await store.ensureCollections([{ name: PROJECTOR_STATUS }]);
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads every stored checkpoint in one query per poll, however many projections and waits', async () => {
    await moveAll(pos(1));
    const w = watch();
    const waits = [w.waitFor(pos(5)), w.waitFor(pos(5)), w.waitFor(pos(3), ['users_v1'])];
    await eventually(() => store.batched.length + store.single >= 5, { what: 'a few polls', everyMs: 10 });
    await moveAll(pos(5));
    expect(await Promise.all(waits.map(outcome))).toEqual(['resolved', 'resolved', 'resolved']);
    expect(store.single).toBe(0);
    for (const names of store.batched) expect(names.sort()).toEqual([...ALL].sort());
  });

  it('ends a wait on a projection another process parked at once, saying the change is saved; waits again once the note is gone', async () => {
    await moveAll(pos(3));
    await park('users_v1');
    const w = watch();
    expect(await outcome(w.waitFor(pos(5), ['users_v1', 'rooms_v1']))).toMatch(
      /^projection_lag: The change was saved, but it is not yet readable: projection users_v1 stopped on an event it cannot fold \(see \/health\)/,
    );
    // Repaired (its worker took it on again): the next wait reads the notes afresh and waits.
    await store.applyBatch([{ collection: PROJECTOR_STATUS, kind: 'delete', id: 'users_v1' }], {});
    const wait = outcome(w.waitFor(pos(5), ['users_v1']));
    await eventually(() => store.batched.length >= 3, { what: 'the wait polls', everyMs: 10 });
    await moveAll(pos(5));
    expect(await wait).toBe('resolved');
  });

  it('a write waits for the projections that fold what it appended: not for a parked one that does not, nor for the audit index', async () => {
    await moveAll(pos(3));
    await park('users_v1');
    const versions = new ProjectionVersions(ALL_PROJECTIONS, (name) => w.positionOf(name));
    const w = watch(600_000, versions);
    await w.refresh();
    const roomCreated = outcome(w.waitFor(pos(5), { folding: ['RoomCreated', 'RoomMembersAdded'] }));
    await eventually(() => store.batched.length >= 3, { what: 'the wait polls', everyMs: 10 });
    // Everything but the users projection and the audit index reaches the write.
    await moveAll(pos(5), ['users_v1', 'audit_index_v2']);
    expect(await roomCreated).toBe('resolved');
    expect(await outcome(w.waitFor(pos(5), { folding: ['UserCreated'] }))).toMatch(/^projection_lag: The change was saved, but it is not yet readable: projection users_v1/);
    expect(versions.foldingCheckpoints(['RoomCreated', 'RoomMembersAdded']).slice().sort()).toEqual(['room_memberships_v1', 'rooms_v1']);
  });

  it('a wait begun before reads switch to a new version ends only once the version now read has the write', async () => {
    const definitions = [usersProjection, { ...usersProjection, version: 2 }];
    let w: ProjectionWatch | null = null;
    const versions = new ProjectionVersions(definitions, (name) => w!.positionOf(name));
    w = new ProjectionWatch(store, versions.checkpoints, null, 600_000, 10, versions);
    watches.push(w);
    await store.applyBatch([], { users_v1: pos(3), users_v2: pos(1) });
    await w.refresh();
    let ended = false;
    const wait = outcome(w.waitFor(pos(5), { folding: ['UserCreated'] })).finally(() => (ended = true));
    // users_v2 catches up with users_v1: reads switch to it.
    await store.applyBatch([], { users_v1: pos(4), users_v2: pos(4) });
    await eventually(() => versions.role('users_v2') === 'serving', { what: 'the switch' });
    // The old version reaches the write first: a read now goes to users_v2, which has not.
    await store.applyBatch([], { users_v1: pos(5) });
    const polls = store.batched.length;
    await eventually(() => ended || store.batched.length >= polls + 3, { what: 'the wait polls, or ends' });
    expect(ended).toBe(false);
    await store.applyBatch([], { users_v2: pos(5) });
    expect(await wait).toBe('resolved');
  });
});

/** The projectors of a process that folds them itself (the embedded server's), as the watch sees them. */
class ProjectorsHere {
  readonly positions = new Map<string, LogPosition>();
  readonly parked = new Map<string, LogPosition>();
  private readonly listeners = new Set<() => void>();
  constructor(readonly held: Set<string>) {}
  holds = (checkpoint: string) => this.held.has(checkpoint);
  positionOf = (checkpoint: string) => this.positions.get(checkpoint) ?? null;
  parkedAt = (checkpoint: string) => this.parked.get(checkpoint) ?? null;
  onProgress(listener: () => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  fold(checkpoint: string, to: LogPosition) {
    this.positions.set(checkpoint, to);
    for (const listener of this.listeners) listener();
  }
}

describe('ProjectionWatch in a process that folds the projections itself: writes left to their readers', () => {
  const USERS = checkpointName(usersProjection);
  let dir: string;
  let store: SqliteReadModelStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-watch-here-'));
    store = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reader waits until the projection folded every write left to it; at once when none was', async () => {
    const here = new ProjectorsHere(new Set([USERS]));
    const watch = new ProjectionWatch(store, ALL, here, 600_000);
    try {
      expect(watch.foldsHere([USERS])).toBe(true);
      await expect(watch.readersCaughtUp([USERS])).resolves.toBeUndefined();
      here.fold(USERS, pos(3));
      watch.leftToReaders(pos(5), [USERS]);
      watch.leftToReaders(pos(4), [USERS]); // an earlier one answered later: the newest stays
      let read = false;
      const reading = watch.readersCaughtUp([USERS]).then(() => (read = true));
      here.fold(USERS, pos(4));
      await new Promise((resolve) => setImmediate(resolve));
      expect(read).toBe(false);
      here.fold(USERS, pos(5));
      await reading;
      expect(read).toBe(true);
    } finally {
      watch.close();
    }
  });

  it('writes wait themselves where the projection is not folded here, or parked; a reader of a parked one reads what it holds; one that lags past the bound answers projection_lag', async () => {
    const here = new ProjectorsHere(new Set());
    const watch = new ProjectionWatch(store, ALL, here, 200);
    try {
      expect(watch.foldsHere([USERS])).toBe(false);
      here.held.add(USERS);
      here.parked.set(USERS, pos(2));
      expect(watch.foldsHere([USERS])).toBe(false);
      watch.leftToReaders(pos(5), [USERS]);
      await expect(watch.readersCaughtUp([USERS])).resolves.toBeUndefined();
      here.parked.clear();
      expect(await outcome(watch.readersCaughtUp([USERS]))).toMatch(/^projection_lag: /);
    } finally {
      watch.close();
    }
  });
});
