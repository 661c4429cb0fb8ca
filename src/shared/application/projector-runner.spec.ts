import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ALL_PROJECTIONS } from '../../../projections';
import { checkpointName, physicalCollection } from '../../../projections/projection';
import { USERS, userDocumentId } from '../../../projections/users/users.projection';
import { MEMBERSHIPS } from '../../../projections/rooms/memberships.projection';
import { usersProjection } from '../../../projections/users/users.projection';
import { ProjectorRunner } from './projector-runner';
import { ProjectionWatch } from './projection-watch';

/** The runner writes to versioned collections; this spec reads the store underneath. */
const PHYSICAL_USERS = physicalCollection(USERS, 1);
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('ProjectorRunner over SQLite', () => {
  let dir: string;
  let events: SqliteEventStore;
  let readModels: SqliteReadModelStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-runner-'));
    events = new SqliteEventStore(join(dir, 'events.sqlite'));
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
  });
  afterEach(async () => {
    await events.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const seed = async () => {
    await events.append('user-acme.ann', [{ type: 'UserCreated', data: { id: 'ann', name: 'A', created_at: 't1' }, metadata: meta }], 'no_stream');
    await events.append('user-acme.ann', [{ type: 'UserUpdated', data: { name: 'B', updated_at: 't2' }, metadata: meta }], 0);
    await events.append(
      'room-acme.r1',
      [{ type: 'RoomMembersAdded', data: { members: [{ user_id: 'ann', user_created_at: 't1' }], added_at: 't3' }, metadata: meta }],
      'no_stream',
    );
  };

  it('folds the log, stores each checkpoint and serves read-your-writes', async () => {
    await seed();
    const runner = new ProjectorRunner(events, readModels, ALL_PROJECTIONS);
    await runner.start();
    await runner.caughtUp();
    const head = (await events.headPosition())!;
    for (const p of ALL_PROJECTIONS) expect(await readModels.getCheckpoint(checkpointName(p))).toBe(head);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toMatchObject({ name: 'B' });

    const { position } = await events.append(
      'user-acme.ann',
      [{ type: 'UserUpdated', data: { name: 'C', updated_at: 't4' }, metadata: meta }],
      1,
    );
    await new ProjectionWatch(readModels, ALL_PROJECTIONS.map(checkpointName), runner, 5_000).waitFor(position);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toMatchObject({ name: 'C' });
    await runner.stop();
  });

  it('ignores redelivered events: a rewound checkpoint changes no document', async () => {
    await seed();
    const first = new ProjectorRunner(events, readModels, [usersProjection]);
    await first.start();
    await first.caughtUp();
    await first.stop();
    const before = await readModels.getStored(PHYSICAL_USERS, userDocumentId('acme', 'ann'));

    // Redeliver everything, as after a crash between a write and its checkpoint.
    await readModels.applyBatch([], { [checkpointName(usersProjection)]: '0'.padStart(20, '0') });
    const again = new ProjectorRunner(events, readModels, [usersProjection]);
    await again.start();
    await again.caughtUp();
    await again.stop();
    expect(await readModels.getStored(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toEqual(before);
    expect(before?.document).toMatchObject({ name: 'B' });
  });

  it('lets one runner hold a projection: a second one waits for the lease', async () => {
    await seed();
    const a = new ProjectorRunner(events, readModels, ALL_PROJECTIONS, { owner: 'a' });
    const b = new ProjectorRunner(events, readModels, ALL_PROJECTIONS, { owner: 'b' });
    await a.start();
    await b.start();
    expect(a.running).toHaveLength(ALL_PROJECTIONS.length);
    expect(b.running).toEqual([]);
    await a.stop();
    await b.stop();
  });

  it('applies selections after earlier changes of the same batch', async () => {
    await seed();
    await events.append('user-acme.ann', [{ type: 'UserDeleted', data: { deleted_at: 't5' }, metadata: meta }], 1);
    const runner = new ProjectorRunner(events, readModels, ALL_PROJECTIONS);
    await runner.start();
    await runner.caughtUp();
    expect(await readModels.find(physicalCollection(MEMBERSHIPS, 1), { where: { user_id: 'ann' } })).toEqual([]);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toBeNull();
    await runner.stop();
  });
});
