import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { USERS, userDocumentId, usersProjection } from '../../../../projections/users/users.projection';
import { ProjectorRunner } from './projector-runner';
import { ALL_PROJECTIONS } from '../../../../projections';
import { checkpointName } from '../../../../projections/projection';
import { messageSearchProjection } from '../../../../projections/search/message-search.projection';
import { auditIndexProjection } from '../../../../projections/audit/audit-index.projection';
import { ProjectionVersions } from './projection-versions';
import { ProjectionWatch } from './projection-watch';
import { VersionedReadModels } from './versioned-read-models';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { eventually } from '../../../../test/support/waiting';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

/** A bumped users projection: the same documents plus a field, into its own collections. */
const usersV2: typeof usersProjection = {
  ...usersProjection,
  version: 2,
  evolve(document, event, target) {
    const next = usersProjection.evolve(document, event, target);
    return next && { ...next, shape: 'v2' };
  },
};

describe('projection versions: a bumped version builds beside the serving one, then reads switch', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  let store: SqliteReadModelStore;
  beforeEach(() => ({ events, readModels: store } = stores = openSqliteStores('parley-versions-')));
  afterEach(() => stores.close());

  it('serves the old version while the new one cannot build, and the new one once it has caught up', async () => {
    for (let i = 0; i < 50; i++) {
      await events.append(`user-acme.u${i}`, [{ type: 'UserCreated', data: { id: `u${i}`, name: `U${i}`, created_at: 't' }, metadata: meta }], 'no_stream');
    }
    const v1Only = new ProjectorRunner(events, store, [usersProjection], { owner: 'old-release' });
    await v1Only.start();
    await v1Only.caughtUp();
    await v1Only.stop();

    // The new release lists both versions; another worker holds the new version's lease for now.
    expect(await store.acquireLease('users_v2', 'elsewhere', 60_000)).toBe(true);
    const runner = new ProjectorRunner(events, store, [usersProjection, usersV2], { owner: 'new-release', leaseTtlMs: 300 });
    let watch: ProjectionWatch | null = null;
    const versions = new ProjectionVersions([usersProjection, usersV2], (c) => watch!.positionOf(c));
    watch = new ProjectionWatch(store, versions.checkpoints, runner, 5_000, 10, versions);
    const reads = new VersionedReadModels(store, versions);
    await runner.start();
    await watch.refresh();

    expect(versions.role('users_v2')).toBe('building');
    expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).toMatchObject({ name: 'U7' });
    expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).not.toHaveProperty('shape');
    // Writes meanwhile wait for the serving version only.
    const { position } = await events.append('user-acme.u7', [{ type: 'UserUpdated', data: { name: 'Seven', updated_at: 't2' }, metadata: meta }], 0);
    await watch.waitFor(position, ['users_v2']);
    expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).toMatchObject({ name: 'Seven' });

    await store.releaseLease('users_v2', 'elsewhere');
    await eventually(async () => {
      await watch!.refresh();
      return versions.role('users_v2') === 'serving';
    }, { everyMs: 50 });
    expect(versions.role('users_v1')).toBe('retired');
    expect(await reads.get(USERS, userDocumentId('acme', 'u7'))).toMatchObject({ name: 'Seven', shape: 'v2' });
    expect(await reads.count(USERS)).toBe(50);
    // The old collection is still there, untouched by the switch.
    expect(await store.get('users_v1', userDocumentId('acme', 'u7'))).not.toHaveProperty('shape');
    watch.close();
    await runner.stop();
  });

  it('serves the newest version straight away on a fresh store', () => {
    const versions = new ProjectionVersions([usersProjection, usersV2], () => null);
    expect(versions.collection(USERS)).toBe('users_v2');
  });
});

describe('ProjectionVersions.foldingCheckpoints: what a write waits for', () => {
  const versions = new ProjectionVersions(ALL_PROJECTIONS, () => null);

  it('a send does not wait for the message search index, folded in the background; a delete or an edit of a message does', () => {
    expect(versions.foldingCheckpoints(['MessageSent'])).toContain('messages_v1');
    expect(versions.foldingCheckpoints(['MessageSent'])).not.toContain(checkpointName(messageSearchProjection));
    expect(versions.foldingCheckpoints(['MessageDeleted'])).toContain(checkpointName(messageSearchProjection));
    expect(versions.foldingCheckpoints(['MessageEdited'])).toContain(checkpointName(messageSearchProjection));
    // Readers of the audit index wait for it themselves: no write does.
    expect(versions.foldingCheckpoints(['MessageDeleted'])).not.toContain(checkpointName(auditIndexProjection));
  });
});
