import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ALL_PROJECTIONS } from '../../../../projections';
import { checkpointName } from '../../../../projections/projection';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { dumpReadModels } from '../../../../test/support/read-model-dump';
import { eventually } from '../../../../test/support/waiting';
import { ReadModelStore } from '../../ports/read-model-store.port';
import { positionMagnitude } from '../../domain/event';
import { withPartitionedCheckpoints } from './partitioned-checkpoints';
import { ProjectorRunner } from './projector-runner';
import { splitProjections } from './projector/projection-parts';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const PARTITIONS = 4;
const ROOMS = 8;

/** Rooms with members, messages, edits, deletions, cursors, reactions; then a user's deletion (an event of no room) and a room's. */
async function writeRound(events: SqliteEventStore, round: number): Promise<void> {
  for (let r = 0; r < ROOMS; r++) {
    const room = `r${r}`;
    if (round === 0) {
      await events.append(
        `room-acme.${room}`,
        [{ type: 'RoomMembersAdded', data: { members: ['ann', 'bob'].map((user_id) => ({ user_id, user_created_at: 't0' })), added_at: 't1' }, metadata: meta }],
        'any',
      );
    }
    for (let m = 0; m < 5; m++) {
      const id = round * 1_000 + r * 10 + m + 1;
      await events.append(
        `messages-acme.${room}`,
        [{ type: 'MessageSent', data: { id, user_id: m % 2 ? 'ann' : 'bob', parts: [{ type: 'text/plain', content: `m${id}` }], room_created_at: 't0', created_at: `t${id}` }, metadata: meta }],
        'any',
      );
      if (m === 1) {
        await events.append(`message-acme.${id}`, [{ type: 'MessageEdited', data: { id, room_id: room, parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 'te' }, metadata: meta }], 'any');
      }
      if (m === 2) {
        await events.append(`message-acme.${id}`, [{ type: 'MessageDeleted', data: { id, room_id: room, tombstone: false, deleted_at: 'td' }, metadata: meta }], 'any');
      }
    }
    await events.append(
      `readcursor-acme.${room}.ann`,
      [{ type: 'ReadCursorSet', data: { room_id: room, user_id: 'ann', position: round * 1_000 + r * 10 + 5, user_created_at: 't0', updated_at: `t${round}` }, metadata: meta }],
      'any',
    );
  }
  if (round === 1) {
    await events.append('user-acme.bob', [{ type: 'UserDeleted', data: { deleted_at: 'tx' }, metadata: meta }], 'any');
    await events.append('room-acme.r3', [{ type: 'RoomDeleted', data: { deleted_at: 'ty' }, metadata: meta }], 'any');
  }
}

describe('projections split in partitions across several runners (SQLite)', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  let split: ReadModelStore;
  let whole: SqliteReadModelStore;
  const runners: ProjectorRunner[] = [];
  beforeEach(() => {
    stores = openSqliteStores('parley-partitions-');
    events = stores.events;
    split = withPartitionedCheckpoints(stores.readModels, splitProjections(ALL_PROJECTIONS, PARTITIONS));
    whole = new SqliteReadModelStore(join(stores.dir, 'whole-read-models.sqlite'));
  });
  afterEach(async () => {
    for (const runner of runners.splice(0)) await runner.stop();
    await whole.close();
    await stores.close();
  });

  const runner = (store: ReadModelStore, owner: string, partitions: number) => {
    const started = new ProjectorRunner(events, store, ALL_PROJECTIONS, { owner, partitions, leaseTtlMs: 1_000 });
    runners.push(started);
    return started;
  };
  /** Every projection's checkpoint (a split one's least advanced partition) at the head of the log. */
  const foldedToHead = async (store: ReadModelStore) => {
    const head = await events.headPosition();
    const checkpoints = await store.getCheckpoints(ALL_PROJECTIONS.map(checkpointName));
    return ALL_PROJECTIONS.every((p) => checkpoints.get(checkpointName(p)) === head);
  };

  it('shares the partitions out between two runners, takes over a stopped one\'s, and folds exactly what one whole runner folds', async () => {
    await writeRound(events, 0);
    const a = runner(split, 'worker-a', PARTITIONS);
    await a.start();
    await a.caughtUp();
    const all = a.running.length;
    expect(a.running).toContain(`messages_v1#3/${PARTITIONS}`);

    // A second worker: the first lets half go at its next renewal, the second takes them at its own.
    const b = runner(split, 'worker-b', PARTITIONS);
    await b.start();
    await eventually(() => a.running.length === Math.ceil(all / 2) && b.running.length === all - Math.ceil(all / 2), { timeoutMs: 10_000 });
    expect([...a.running, ...b.running].sort()).toHaveLength(all);
    expect(new Set([...a.running, ...b.running]).size).toBe(all);

    await writeRound(events, 1);
    await eventually(() => foldedToHead(split), { timeoutMs: 10_000 });

    // The second stops: the first takes its partitions back and folds on from their checkpoints.
    await b.stop();
    await writeRound(events, 2);
    await eventually(() => a.running.length === all, { timeoutMs: 10_000 });
    await eventually(() => foldedToHead(split), { timeoutMs: 10_000 });

    const single = runner(whole, 'single', 1);
    await single.start();
    await single.caughtUp();
    const expected = await dumpReadModels(whole, ALL_PROJECTIONS);
    expect(expected.messages_v1.length).toBeGreaterThan(0);
    expect(await dumpReadModels(stores.readModels, ALL_PROJECTIONS)).toEqual(expected);
  }, 60_000);

  it('resumes under a changed partition count from where the old layout stood, and still folds what one whole runner folds', async () => {
    await writeRound(events, 0);
    const four = runner(split, 'four', PARTITIONS);
    await four.start();
    await four.caughtUp();
    await four.stop();
    const before = positionMagnitude(await events.headPosition());
    await writeRound(events, 1);

    const two = runner(withPartitionedCheckpoints(stores.readModels, splitProjections(ALL_PROJECTIONS, 2)), 'two', 2);
    await two.start();
    await two.caughtUp();
    expect(two.running).toContain('messages_v1#1/2');
    // It read only what came after the old layout's checkpoints, not the log from its start.
    expect(two.stats().eventsRead).toBe(positionMagnitude(await events.headPosition()) - before);
    expect(await stores.readModels.getCheckpoint('messages_v1#1/2')).toBe(await events.headPosition());

    const single = runner(whole, 'single', 1);
    await single.start();
    await single.caughtUp();
    expect(await dumpReadModels(stores.readModels, ALL_PROJECTIONS)).toEqual(await dumpReadModels(whole, ALL_PROJECTIONS));
  }, 60_000);
});
