import { recorded } from '../../../../projections/testing';
import type { RecordedEvent } from '../../../shared/domain/event';
import {
  CHATKIT_WEBHOOK_EVENT_TYPES,
  ChatkitObject,
  ChatkitWebhookContext,
  ChatkitWebhookEvent,
  chatkitWebhookEventsOf,
  WEBHOOK_SOURCE_EVENT_TYPES,
  webhookEventId,
} from './chatkit-webhook-events';

const at = '2026-03-01T10:00:00.000Z';
const ann = { id: 'ann', name: 'Ann', created_at: at, updated_at: at };
const ben = { id: 'ben', name: 'Ben', avatar_url: 'https://img.example/ben.png', created_at: at, updated_at: at };
const general = { id: 'general', created_by_id: 'ann', name: 'General', private: false, created_at: at, updated_at: at, member_user_ids: ['ann', 'ben', 'cat'] };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** What the worker answers, as a small in-memory instance: two users, one room, a presence and a sent message. */
const context = (overrides: Partial<ChatkitWebhookContext> = {}): ChatkitWebhookContext => ({
  room: async (instanceId, roomId) => (instanceId === 'i1' && roomId === 'general' ? general : null),
  users: async (_instanceId, ids) => [ann, ben].filter((u) => ids.includes(u.id)),
  messageOrigin: async (_instanceId, roomId, id) => (roomId === 'general' && id === 7 ? { user_id: 'ann', created_at: at } : null),
  offlineUserIds: async (_instanceId, ids) => ids.filter((id) => id !== 'ben'),
  attachment: (instanceId, roomId, a): ChatkitObject => ({ id: a.id, download_url: `https://parley.example/${instanceId}/${roomId}/${a.id}`, name: a.name, size: a.size }),
  ...overrides,
});

const withActor = <E extends RecordedEvent>(event: E, user_id: string): E => ({ ...event, metadata: { ...event.metadata, occurred_at: at, actor: { user_id } } });
const occurred = <E extends RecordedEvent>(event: E): E => ({ ...event, metadata: { ...event.metadata, occurred_at: at } });

const only = async (event: RecordedEvent, ctx = context()): Promise<ChatkitWebhookEvent> => {
  const events = await chatkitWebhookEventsOf(event, ctx);
  expect(events).toHaveLength(1);
  return events[0];
};

describe('Chatkit webhook events of the log', () => {
  it('gives each webhook event a UUID derived from the log event and the type: the same on every call, different per type', async () => {
    const event = occurred(recorded('room-i1.general', 'RoomDeleted', { deleted_at: at }));
    const first = await only(event);
    const again = await only(event);
    expect(first.id).toMatch(UUID);
    expect(again.id).toBe(first.id);
    expect(first.id).toBe(webhookEventId(event.id, 'v1.rooms_deleted'));
    expect(webhookEventId(event.id, 'v1.messages_created')).not.toBe(first.id);
    expect(webhookEventId('other', 'v1.rooms_deleted')).not.toBe(first.id);
    expect(first.timestamp).toBe(at);
  });

  it('v1.users_created: the user as the API shows it, one event per user of a batch', async () => {
    const single = await only(
      occurred(recorded('user-i1.ben', 'UserCreated', { id: 'ben', name: 'Ben', avatar_url: 'https://img.example/ben.png', custom_data: { team: 'red' }, created_at: at })),
    );
    expect(single).toMatchObject({
      type: 'v1.users_created',
      payload: { users: [{ id: 'ben', name: 'Ben', avatar_url: 'https://img.example/ben.png', custom_data: { team: 'red' }, created_at: at, updated_at: at }] },
    });
    // A batch appends one UserCreated per user (on SQLite in one commit): each is its own webhook event.
    const batch = [
      recorded('user-i1.u1', 'UserCreated', { id: 'u1', name: 'One', created_at: at }),
      recorded('user-i1.u2', 'UserCreated', { id: 'u2', name: 'Two', created_at: at }),
    ];
    const events = (await Promise.all(batch.map((e) => chatkitWebhookEventsOf(e, context())))).flat();
    expect(events.map((e) => e.payload.users)).toEqual([
      [{ id: 'u1', name: 'One', created_at: at, updated_at: at }],
      [{ id: 'u2', name: 'Two', created_at: at, updated_at: at }],
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });

  it('v1.users_created of a profile erased since: the erased form (the log is read when delivered)', async () => {
    const erased = await only(recorded('user-i1.ben', 'UserCreated', { id: 'ben', name: '', created_at: at }));
    expect(erased.payload).toEqual({ users: [{ id: 'ben', name: '', created_at: at, updated_at: at }] });
  });

  it('v1.users_deleted: the user ids', async () => {
    const deleted = await only(recorded('user-i1.ben', 'UserDeleted', { deleted_at: at }));
    expect(deleted).toMatchObject({ type: 'v1.users_deleted', payload: { user_ids: ['ben'] } });
  });

  it('v1.rooms_created: the room as v6 shows it', async () => {
    const created = await only(
      recorded('room-i1.general', 'RoomCreated', {
        id: 'general',
        name: 'General',
        private: true,
        created_by_id: 'ann',
        custom_data: { topic: 'all' },
        push_notification_title_override: 'News',
        created_at: at,
      }),
    );
    expect(created).toMatchObject({
      type: 'v1.rooms_created',
      payload: {
        rooms: [
          { id: 'general', created_by_id: 'ann', name: 'General', private: true, custom_data: { topic: 'all' }, push_notification_title_override: 'News', created_at: at, updated_at: at },
        ],
      },
    });
  });

  it('v1.rooms_deleted: the room ids', async () => {
    expect(await only(recorded('room-i1.general', 'RoomDeleted', { deleted_at: at }))).toMatchObject({
      type: 'v1.rooms_deleted',
      payload: { room_ids: ['general'] },
    });
  });

  it('v1.users_added_to_room: the room and the users added, in order; a user that did not exist then reads as its id', async () => {
    const added = await only(
      recorded('room-i1.general', 'RoomMembersAdded', {
        members: [
          { user_id: 'ben', user_created_at: at },
          { user_id: 'gone', user_created_at: at },
          { user_id: 'ann', user_created_at: at },
        ],
        added_at: at,
      }),
    );
    expect(added).toMatchObject({ type: 'v1.users_added_to_room', payload: { room: general, users: [ben, { id: 'gone' }, ann] } });
  });

  it('v1.users_removed_from_room: the room (its id alone when it did not exist then) and the users removed', async () => {
    const removed = await only(withActor(recorded('room-i1.general', 'RoomMembersRemoved', { user_ids: ['ben'], removed_at: at }), 'ann'));
    expect(removed).toMatchObject({ type: 'v1.users_removed_from_room', payload: { room: general, users: [ben] } });
    const ofDeletedRoom = await only(recorded('room-i1.old', 'RoomMembersRemoved', { user_ids: ['ben', 'ann'], removed_at: at }));
    expect(ofDeletedRoom.payload).toEqual({ room: { id: 'old' }, users: [ben, ann] });
  });

  it('v1.user_left_room: a recorded leave, or (logs before leaves were recorded) a user removing only themselves', async () => {
    const left = await only(recorded('room-i1.general', 'RoomMembersRemoved', { user_ids: ['ben'], removed_at: at, left: true }));
    expect(left).toMatchObject({ type: 'v1.user_left_room', payload: { room: general, user: ben, users: [ben] } });
    const selfRemoved = await only(withActor(recorded('room-i1.general', 'RoomMembersRemoved', { user_ids: ['ben'], removed_at: at }), 'ben'));
    expect(selfRemoved.type).toBe('v1.user_left_room');
  });

  it('v1.messages_created: the v6 message (parts, links as they read now, attachments with their links)', async () => {
    const sent = recorded('messages-i1.general', 'MessageSent', {
      id: 42,
      user_id: 'ben',
      user_created_at: at,
      parts: [
        { type: 'text/plain', content: 'hi all' },
        { type: 'image/*', url: 'https://img.example/cat.gif' },
        { type: 'application/pdf', attachment: { id: 'att-1', name: 'plan.pdf', size: 1234 } },
      ],
      room_created_at: at,
      created_at: at,
    });
    const [created] = await chatkitWebhookEventsOf(sent, context({ offlineUserIds: async () => [] }));
    expect(created).toMatchObject({
      type: 'v1.messages_created',
      payload: {
        messages: [
          {
            id: 42,
            user_id: 'ben',
            room_id: 'general',
            parts: [
              { type: 'text/plain', content: 'hi all' },
              { type: 'image/x-pusher-img', url: 'https://img.example/cat.gif' },
              { type: 'application/pdf', attachment: { id: 'att-1', download_url: 'https://parley.example/i1/general/att-1', name: 'plan.pdf', size: 1234 } },
            ],
            created_at: at,
            updated_at: at,
          },
        ],
      },
    });
  });

  it('v1.messages_created of a message deleted before its delivery: the erased form, no content', async () => {
    const erased = recorded('messages-i1.general', 'MessageSent', { id: 43, user_id: 'ben', parts: [], room_created_at: at, created_at: at });
    const [created] = await chatkitWebhookEventsOf(erased, context());
    expect((created.payload.messages as ChatkitObject[])[0].parts).toEqual([]);
  });

  it('v1.message_sent_user_offline: the message, its sender, the room and the members (not the sender) offline when it was sent', async () => {
    const sent = recorded('messages-i1.general', 'MessageSent', {
      id: 44,
      user_id: 'ann',
      parts: [{ type: 'text/plain', content: 'anyone?' }],
      room_created_at: at,
      created_at: at,
    });
    const asked: string[][] = [];
    const events = await chatkitWebhookEventsOf(
      sent,
      context({
        offlineUserIds: async (_i, ids, sentAt) => {
          asked.push([...ids, sentAt]);
          return ids.filter((id) => id !== 'ben');
        },
      }),
    );
    expect(events.map((e) => e.type)).toEqual(['v1.messages_created', 'v1.message_sent_user_offline']);
    expect(asked).toEqual([['ben', 'cat', at]]);
    const message = { id: 44, user_id: 'ann', room_id: 'general', parts: [{ type: 'text/plain', content: 'anyone?' }], created_at: at, updated_at: at };
    expect(events[1].payload).toEqual({ message, sender: ann, room: general, offline_user_ids: ['cat'] });
    expect(events[1].id).not.toBe(events[0].id);
  });

  it('no v1.message_sent_user_offline when every other member is online, or presence then is not known (a replay)', async () => {
    const sent = recorded('messages-i1.general', 'MessageSent', { id: 45, user_id: 'ann', parts: [], room_created_at: at, created_at: at });
    const allOnline = await chatkitWebhookEventsOf(sent, context({ offlineUserIds: async () => [] }));
    const unknown = await chatkitWebhookEventsOf(sent, context({ offlineUserIds: async () => null }));
    expect(allOnline.map((e) => e.type)).toEqual(['v1.messages_created']);
    expect(unknown.map((e) => e.type)).toEqual(['v1.messages_created']);
  });

  it('gives only the types a webhook wants, without the lookups of the others', async () => {
    const sent = recorded('messages-i1.general', 'MessageSent', { id: 46, user_id: 'ann', parts: [], room_created_at: at, created_at: at });
    const lookups: string[] = [];
    const counting = context({
      room: async () => (lookups.push('room'), general),
      offlineUserIds: async (_i, ids) => (lookups.push('presence'), [...ids]),
    });
    expect((await chatkitWebhookEventsOf(sent, counting, new Set(['v1.messages_created']))).map((e) => e.type)).toEqual(['v1.messages_created']);
    expect(lookups).toEqual([]);
    expect((await chatkitWebhookEventsOf(sent, counting, new Set(['v1.message_sent_user_offline']))).map((e) => e.type)).toEqual([
      'v1.message_sent_user_offline',
    ]);
    expect(lookups).toEqual(['room', 'presence']);
    const added = recorded('room-i1.general', 'RoomMembersAdded', { members: [{ user_id: 'ben', user_created_at: at }], added_at: at });
    expect(await chatkitWebhookEventsOf(added, counting, new Set(['v1.messages_created']))).toEqual([]);
    expect(lookups).toEqual(['room', 'presence']);
  });

  it('v1.messages_edited: the message as edited, its sender and creation looked up (an edit names neither)', async () => {
    const edited = await only(
      recorded('message-i1.7', 'MessageEdited', { id: 7, room_id: 'general', parts: [{ type: 'text/plain', content: 'fixed' }], updated_at: '2026-03-01T11:00:00.000Z' }),
    );
    expect(edited).toMatchObject({
      type: 'v1.messages_edited',
      payload: { messages: [{ id: 7, user_id: 'ann', room_id: 'general', parts: [{ type: 'text/plain', content: 'fixed' }], created_at: at, updated_at: '2026-03-01T11:00:00.000Z' }] },
    });
    // Older logs wrote edits into the room's timeline, without room_id.
    const old = await only(recorded('messages-i1.general', 'MessageEdited', { id: 8, parts: [], updated_at: at }));
    expect(old.payload).toEqual({ messages: [{ id: 8, room_id: 'general', parts: [], updated_at: at }] });
  });

  it('v1.messages_deleted: the message ids', async () => {
    const deleted = await only(recorded('message-i1.7', 'MessageDeleted', { id: 7, room_id: 'general', tombstone: false, deleted_at: at }));
    expect(deleted).toMatchObject({ type: 'v1.messages_deleted', payload: { message_ids: [7], room_id: 'general' } });
  });

  it('nothing of a message sent under a shadow ban: not its send, its edits or its deletion', async () => {
    const shadowed = context({ messageOrigin: async () => ({ user_id: 'ben', created_at: at, shadow: true }) });
    const sent = recorded('messages-i1.general', 'MessageSent', { id: 44, user_id: 'ben', parts: [{ type: 'text/plain', content: 'buy now' }], room_created_at: at, created_at: at, shadow: true });
    expect(await chatkitWebhookEventsOf(sent, shadowed)).toEqual([]);
    const edited = recorded('message-i1.44', 'MessageEdited', { id: 44, room_id: 'general', parts: [{ type: 'text/plain', content: 'buy' }], updated_at: at });
    expect(await chatkitWebhookEventsOf(edited, shadowed)).toEqual([]);
    const deleted = recorded('message-i1.44', 'MessageDeleted', { id: 44, room_id: 'general', tombstone: false, deleted_at: at });
    expect(await chatkitWebhookEventsOf(deleted, shadowed)).toEqual([]);
  });

  it('nothing for events no webhook carries', async () => {
    const others: RecordedEvent[] = [
      recorded('user-i1.ben', 'UserUpdated', { name: 'B', updated_at: at }),
      recorded('room-i1.general', 'RoomUpdated', { name: 'G', updated_at: at }),
      recorded('cursor-i1.x', 'ReadCursorSet', { user_id: 'ann', room_id: 'general', position: 1, user_created_at: at, updated_at: at }),
    ];
    for (const event of others) expect(await chatkitWebhookEventsOf(event, context())).toEqual([]);
  });

  it('every type is made by some source event, and the subscription filter names every source', async () => {
    const sources = [
      recorded('user-i1.ben', 'UserCreated', { id: 'ben', name: 'Ben', created_at: at }),
      recorded('user-i1.ben', 'UserDeleted', { deleted_at: at }),
      recorded('room-i1.general', 'RoomCreated', { id: 'general', name: 'General', private: false, created_at: at }),
      recorded('room-i1.general', 'RoomDeleted', { deleted_at: at }),
      recorded('room-i1.general', 'RoomMembersAdded', { members: [{ user_id: 'ben', user_created_at: at }], added_at: at }),
      recorded('room-i1.general', 'RoomMembersRemoved', { user_ids: ['ben'], removed_at: at }),
      recorded('room-i1.general', 'RoomMembersRemoved', { user_ids: ['ben'], removed_at: at, left: true }),
      recorded('messages-i1.general', 'MessageSent', { id: 1, user_id: 'ann', parts: [], room_created_at: at, created_at: at }),
      recorded('message-i1.1', 'MessageEdited', { id: 1, room_id: 'general', parts: [], updated_at: at }),
      recorded('message-i1.1', 'MessageDeleted', { id: 1, room_id: 'general', tombstone: true, deleted_at: at }),
    ];
    const types = new Set<string>();
    for (const event of sources) {
      expect(WEBHOOK_SOURCE_EVENT_TYPES).toContain(event.type);
      for (const e of await chatkitWebhookEventsOf(event, context())) types.add(e.type);
    }
    expect([...types].sort()).toEqual([...CHATKIT_WEBHOOK_EVENT_TYPES].sort());
  });
});
