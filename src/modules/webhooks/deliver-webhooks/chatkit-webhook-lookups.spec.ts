import type { DomainEvent } from '../../../shared/domain/event';
import type { LogPosition } from '../../../shared/domain/event';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { SealingEventStore } from '../../../shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../../../shared/crypto/data-key-ring';
import { SecretBox } from '../../../shared/crypto/secret-box';
import { INSTANCE_WIPED, instanceWipesStream } from '../../../shared/domain/instance-wipe';
import { CountingStore } from '../../../../test/support/counting-event-store';
import { ChatkitWebhookLookups } from './chatkit-webhook-lookups';

/** Rooms and users as they were at a log event, from the log itself (a real SQLite log). */
describe('ChatkitWebhookLookups: rooms and users at the event delivered', () => {
  let stores: SqliteStores;
  const t = (s: number) => `2026-03-01T10:00:0${s}.000Z`;
  const append = async (stream: string, ...events: DomainEvent[]): Promise<LogPosition> =>
    (await stores.events.append(stream, events.map((e) => ({ ...e, metadata: { occurred_at: t(0) } })), 'any')).position;
  const lookups = () => new ChatkitWebhookLookups({ events: stores.events, sentMessages: null as never, offlineNow: null as never, attachment: null as never });

  beforeEach(() => {
    stores = openSqliteStores('parley-webhook-lookups-');
  });
  afterEach(() => stores.close());

  it.each([
    ['a lookup of its own for each event', () => lookups()],
    ['one lookup for every event, asked out of order (a replay after a live delivery)', ((shared?: ChatkitWebhookLookups) => () => (shared ??= lookups()))()],
  ])('a room with its members, and users, as they were then: later changes, a delete included, do not show (%s)', async (_, lookupsFor) => {
    await append('user-i1.ann', { type: 'UserCreated', data: { id: 'ann', name: 'Ann', created_at: t(0) } });
    await append('user-i1.ben', { type: 'UserCreated', data: { id: 'ben', name: 'Ben', created_at: t(0) } });
    const added = await append(
      'room-i1.general',
      { type: 'RoomCreated', data: { id: 'general', name: 'General', private: false, created_by_id: 'ann', created_at: t(1) } },
      { type: 'RoomMembersAdded', data: { members: [{ user_id: 'ann', user_created_at: t(0) }, { user_id: 'ben', user_created_at: t(0) }], added_at: t(1) } },
    );
    const renamed = await append('room-i1.general', { type: 'RoomUpdated', data: { name: 'Town square', updated_at: t(2) } });
    await append('user-i1.ben', { type: 'UserUpdated', data: { name: 'Benjamin', updated_at: t(2) } });
    const removed = await append('room-i1.general', { type: 'RoomMembersRemoved', data: { user_ids: ['ben'], removed_at: t(3) } });
    await append('room-i1.general', { type: 'RoomDeleted', data: { deleted_at: t(4) } });
    await append('user-i1.ben', { type: 'UserDeleted', data: { deleted_at: t(4) } });

    const atAdd = lookupsFor().at(added);
    expect(await atAdd.room('i1', 'general')).toEqual({
      id: 'general',
      created_by_id: 'ann',
      name: 'General',
      private: false,
      created_at: t(1),
      updated_at: t(1),
      member_user_ids: ['ann', 'ben'],
    });
    expect(await atAdd.users('i1', ['ben', 'ann', 'nobody'])).toEqual([
      { id: 'ben', name: 'Ben', created_at: t(0), updated_at: t(0) },
      { id: 'ann', name: 'Ann', created_at: t(0), updated_at: t(0) },
    ]);
    expect(await lookupsFor().at(renamed).room('i1', 'general')).toMatchObject({ name: 'Town square', member_user_ids: ['ann', 'ben'] });
    const atRemoval = lookupsFor().at(removed);
    expect(await atRemoval.room('i1', 'general')).toMatchObject({ name: 'Town square', member_user_ids: ['ann'] });
    expect(await atRemoval.users('i1', ['ben'])).toEqual([{ id: 'ben', name: 'Benjamin', created_at: t(0), updated_at: t(2) }]);
    const now = await stores.events.headPosition();
    expect(await lookupsFor().at(now!).room('i1', 'general')).toBeNull();
    expect(await lookupsFor().at(now!).users('i1', ['ben'])).toEqual([]);
    expect(await lookupsFor().at(added).room('i1', 'general')).toMatchObject({ name: 'General', member_user_ids: ['ann', 'ben'] });
    expect(await lookupsFor().at(added).users('i1', ['ben'])).toEqual([{ id: 'ben', name: 'Ben', created_at: t(0), updated_at: t(0) }]);
  });

  it("reads per message delivered what the room and its sender gained since the last delivery, however long the room's history", async () => {
    const counting = new CountingStore(stores.events);
    const delivering = new ChatkitWebhookLookups({ events: counting.events, sentMessages: null as never, offlineNow: null as never, attachment: null as never });
    await append('user-i1.ann', { type: 'UserCreated', data: { id: 'ann', name: 'Ann', created_at: t(0) } });
    await append('room-i1.general', { type: 'RoomCreated', data: { id: 'general', name: 'General', private: false, created_by_id: 'ann', created_at: t(1) } });
    const readsPerMessage: { members: number; streamReads: number; eventsRead: number; logEventsRead: number }[] = [];
    for (let members = 1; members <= 400; members++) {
      // Members join one at a time, a message after each (with its users_added_to_room: every event type delivered).
      await append('room-i1.general', { type: 'RoomMembersAdded', data: { members: [{ user_id: `u${members}`, user_created_at: t(0) }], added_at: t(2) } });
      const sent = await append('message-i1.' + members, {
        type: 'MessageSent',
        data: { id: members, user_id: 'ann', parts: [{ type: 'text/plain', content: 'hi' }], room_created_at: t(1), created_at: t(3) },
      });
      counting.reset();
      const at = delivering.at(sent);
      const [room, users] = await Promise.all([at.room('i1', 'general'), at.users('i1', ['ann'])]);
      readsPerMessage.push({ members, streamReads: counting.reads, eventsRead: counting.eventsRead, logEventsRead: counting.logEventsRead });
      if (members % 100 === 0) {
        // Payloads are those of a fold from the start.
        const fresh = lookups().at(sent);
        expect(room).toEqual(await fresh.room('i1', 'general'));
        expect(users).toEqual(await fresh.users('i1', ['ann']));
        expect((room as { member_user_ids: string[] }).member_user_ids).toHaveLength(members);
      }
    }
    // The room's new member (1 event) and nothing of the sender (kept): the same with 10 members as with 400.
    const steady = readsPerMessage.slice(1);
    expect(new Set(steady.map(({ streamReads, eventsRead, logEventsRead }) => JSON.stringify({ streamReads, eventsRead, logEventsRead })))).toEqual(
      new Set([JSON.stringify({ streamReads: 2, eventsRead: 1, logEventsRead: 0 })]),
    );
  });
});

/** Content kept between deliveries goes once its keys are destroyed: a later delivery shows what a fold from the start reads. */
describe('ChatkitWebhookLookups: kept folds and destroyed content (a sealed log)', () => {
  const box = SecretBox.fromBase64(Buffer.alloc(32, 7).toString('base64'));
  let stores: SqliteStores;
  let keys: SqliteDataKeyStore;
  let log: SealingEventStore;
  const t = (s: number) => `2026-03-01T10:00:0${s}.000Z`;
  const append = async (stream: string, ...events: DomainEvent[]): Promise<LogPosition> =>
    (await log.append(stream, events.map((e) => ({ ...e, metadata: { occurred_at: t(0) } })), 'any')).position;
  const lookups = () => new ChatkitWebhookLookups({ events: log, sentMessages: null as never, offlineNow: null as never, attachment: null as never });

  beforeEach(() => {
    stores = openSqliteStores('parley-webhook-lookups-sealed-');
    keys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    log = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
  });
  afterEach(async () => {
    await keys.close();
    await stores.close();
  });

  const seed = async (instanceId: string) => {
    await append(`user-${instanceId}.ann`, { type: 'UserCreated', data: { id: 'ann', name: 'Ann Secret', created_at: t(0) } });
    return append(
      `room-${instanceId}.general`,
      { type: 'RoomCreated', data: { id: 'general', name: 'Secret plans', private: false, created_by_id: 'ann', created_at: t(1) } },
      { type: 'RoomMembersAdded', data: { members: [{ user_id: 'ann', user_created_at: t(0) }], added_at: t(1) } },
    );
  };

  it.each([
    ['the user and the room deleted', (instanceId: string) =>
      Promise.all([
        append(`user-${instanceId}.ann`, { type: 'UserDeleted', data: { deleted_at: t(2), user_created_at: t(0) } }),
        append(`room-${instanceId}.general`, { type: 'RoomDeleted', data: { deleted_at: t(2) } }),
      ])],
    ['the instance wiped', (instanceId: string) => append(instanceWipesStream(instanceId), { type: INSTANCE_WIPED, data: { wiped_at: t(2) } })],
  ])('a delivery after %s shows the erased form, not what was kept', async (_, destroy) => {
    const delivering = lookups();
    const created = await seed('i1');
    const before = delivering.at(created);
    expect(await before.room('i1', 'general')).toMatchObject({ name: 'Secret plans' });
    expect(await before.users('i1', ['ann'])).toMatchObject([{ name: 'Ann Secret' }]);

    await destroy('i1');
    // A webhook behind (a receiver down, a redelivery) delivers the creation again.
    const after = delivering.at(created);
    const fresh = lookups().at(created);
    const [room, users] = [await after.room('i1', 'general'), await after.users('i1', ['ann'])];
    expect(room).toEqual(await fresh.room('i1', 'general'));
    expect(users).toEqual(await fresh.users('i1', ['ann']));
    expect(JSON.stringify([room, users])).not.toMatch(/Secret/);
  });
});
