import type { DomainEvent } from '../../../shared/domain/event';
import type { LogPosition } from '../../../shared/domain/event';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { ChatkitWebhookLookups } from './chatkit-webhook-lookups';

/** Rooms and users as they were at a log event, from the log itself (a real SQLite log). */
describe('ChatkitWebhookLookups: rooms and users at the event delivered', () => {
  let stores: SqliteStores;
  const t = (s: number) => `2026-03-01T10:00:0${s}.000Z`;
  const append = async (stream: string, ...events: DomainEvent[]): Promise<LogPosition> =>
    (await stores.events.append(stream, events.map((e) => ({ ...e, metadata: { occurred_at: t(0) } })), 'any')).position;
  const lookups = () => new ChatkitWebhookLookups({ events: stores.events, sentMessages: null as never, presence: null as never, attachment: null as never });

  beforeEach(() => {
    stores = openSqliteStores('parley-webhook-lookups-');
  });
  afterEach(() => stores.close());

  it('a room with its members, and users, as they were then: later changes, a delete included, do not show', async () => {
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

    const atAdd = lookups().at(added);
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
    expect(await lookups().at(renamed).room('i1', 'general')).toMatchObject({ name: 'Town square', member_user_ids: ['ann', 'ben'] });
    const atRemoval = lookups().at(removed);
    expect(await atRemoval.room('i1', 'general')).toMatchObject({ name: 'Town square', member_user_ids: ['ann'] });
    expect(await atRemoval.users('i1', ['ben'])).toEqual([{ id: 'ben', name: 'Benjamin', created_at: t(0), updated_at: t(2) }]);
    const now = await stores.events.headPosition();
    expect(await lookups().at(now!).room('i1', 'general')).toBeNull();
    expect(await lookups().at(now!).users('i1', ['ben'])).toEqual([]);
  });
});
