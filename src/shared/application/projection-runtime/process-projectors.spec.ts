import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { checkpointName, ProjectionDefinition } from '../../../../projections/projection';
import { roomsProjection } from '../../../../projections/rooms/rooms.projection';
import { USERS, userDocumentId, usersProjection } from '../../../../projections/users/users.projection';
import { LogPosition, positionAfter } from '../../domain/event';
import { ProjectorRunner } from './projector-runner';
import { buildingApart, ProjectionVersions } from './projection-versions';
import { ProjectionWatch } from './projection-watch';
import { ProcessProjectors } from './process-projectors';
import { VersionedReadModels } from './versioned-read-models';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const pos = (i: number): LogPosition => String(i).padStart(20, '0');
const usersV2: ProjectionDefinition = { ...usersProjection, version: 2 };
const names = (definitions: readonly ProjectionDefinition[]) => definitions.map(checkpointName);

describe('buildingApart: which versions build beside the serving ones, from the stored checkpoints', () => {
  const apart = (stored: Record<string, LogPosition>) => {
    const { current, building } = buildingApart([roomsProjection, usersProjection, usersV2], new Map(Object.entries(stored)));
    return { current: names(current), building: names(building) };
  };

  it('a bumped version with nothing folded, or folded short of the serving one, builds apart', () => {
    expect(apart({ rooms_v1: pos(9), users_v1: pos(9) })).toEqual({ current: ['rooms_v1', 'users_v1'], building: ['users_v2'] });
    expect(apart({ rooms_v1: pos(9), users_v1: pos(9), users_v2: pos(4) })).toEqual({ current: ['rooms_v1', 'users_v1'], building: ['users_v2'] });
  });

  it('nothing builds apart once the new version has caught up (the old one is retired), nor on a fresh store', () => {
    expect(apart({ rooms_v1: pos(9), users_v1: pos(9), users_v2: pos(9) })).toEqual({ current: ['rooms_v1', 'users_v1', 'users_v2'], building: [] });
    expect(apart({})).toEqual({ current: ['rooms_v1', 'users_v1', 'users_v2'], building: [] });
  });
});

describe('ProcessProjectors: a version building from the start of the log never holds up the serving one', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  let store: SqliteReadModelStore;
  beforeEach(() => ({ events, readModels: store } = stores = openSqliteStores('parley-process-projectors-')));
  afterEach(() => stores.close());

  it('folds and acknowledges a new write with the serving version while the new one is still behind it, then switches', async () => {
    const users = 20_000;
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < users; i++) {
      appends.push(events.append(`user-acme.u${i}`, [{ type: 'UserCreated', data: { id: `u${i}`, name: `U${i}`, created_at: 't' }, metadata: meta }], 'no_stream'));
    }
    await Promise.all(appends);
    const v1Only = new ProjectorRunner(events, store, [usersProjection], { owner: 'old-release' });
    await v1Only.start();
    await v1Only.caughtUp();
    await v1Only.stop();

    const definitions = [usersProjection, usersV2];
    const { current, building } = buildingApart(definitions, await store.getCheckpoints(names(definitions)));
    const runner = (group: readonly ProjectionDefinition[], page: number) => new ProjectorRunner(events, store, group, { owner: 'new-release', catchUpPage: page });
    // Small pages: the new version needs hundreds of them to reach the head.
    const projectors = new ProcessProjectors(runner(current, 2_000), runner(building, 50));
    let watch: ProjectionWatch | null = null;
    const versions = new ProjectionVersions(definitions, (c) => watch!.positionOf(c));
    watch = new ProjectionWatch(store, versions.checkpoints, projectors, 5_000, 10, versions);
    const reads = new VersionedReadModels(store, versions);
    try {
      await projectors.start();
      expect(projectors.running.sort()).toEqual(['users_v1', 'users_v2']);

      const { position } = await events.append('user-acme.u7', [{ type: 'UserUpdated', data: { name: 'Seven', updated_at: 't2' }, metadata: meta }], 0);
      await watch.waitFor(position, { folding: ['UserUpdated'] });
      const v2At = watch.positionOf('users_v2');
      expect(v2At === null || positionAfter(position, v2At)).toBe(true);
      expect(versions.role('users_v2')).toBe('building');
      expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).toMatchObject({ name: 'Seven' });

      const deadline = Date.now() + 30_000;
      while (versions.role('users_v2') !== 'serving' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(versions.role('users_v2')).toBe('serving');
      expect(versions.role('users_v1')).toBe('retired');
      expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).toMatchObject({ name: 'Seven' });
      expect(await reads.count(USERS)).toBe(users);
    } finally {
      watch.close();
      await projectors.stop();
    }
  }, 60_000);
});
