import { hash } from 'node:crypto';
import type { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import { currentPart, MessagePart } from '../../messages/domain/message-parts';
import type { MessageDeleted, MessageEdited, MessageSent } from '../../messages/domain/message.events';
import { shownTo } from '../../messages/domain/message-visibility';
import type { RoomCreated, RoomDeleted, RoomMembersAdded, RoomMembersRemoved } from '../../rooms/domain/room.events';
import type { UserCreated, UserDeleted } from '../../users/domain/user.events';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { presentUser } from '../../users/presentation/user.presenter';
import { roomsProjection } from '../../../../projections/rooms/rooms.projection';
import { usersProjection } from '../../../../projections/users/users.projection';

/**
 * Chatkit's webhook events, as the log's events stand for them: the contract between the webhook
 * worker (which delivers) and Chatkit's wire format (what is delivered). The shapes are those
 * Chatkit's receivers read (docs.pusher.com/chatkit/webhooks; `GetStream/pusher-chatkit-migration`
 * `webhook/server.js`; Pusher's push-notification receiver tutorial): `users`, `user_ids`, `rooms`,
 * `room_ids`, `messages` (v6 messages: `parts`), `message_ids`, `room` with `users` (and `user`
 * for a leave), and `sender`, `message`, `offline_user_ids` for an offline member's push.
 * docs/webhooks.md "Event types and payloads" shows each.
 */
export const CHATKIT_WEBHOOK_EVENT_TYPES = ['v1.users_created', 'v1.users_deleted', 'v1.rooms_created',
  'v1.rooms_deleted', 'v1.messages_created', 'v1.messages_edited', 'v1.messages_deleted',
  'v1.users_added_to_room', 'v1.users_removed_from_room', 'v1.user_left_room',
  'v1.message_sent_user_offline'] as const;
export type ChatkitWebhookEventType = (typeof CHATKIT_WEBHOOK_EVENT_TYPES)[number];
export interface ChatkitWebhookEvent {
  readonly type: ChatkitWebhookEventType;
  /** Stable across retries, redeliveries and replays: derived from the log event's id (and the type when one log event gives several). */
  readonly id: string;
  /** When the change happened (ISO 8601), from the log event. */
  readonly timestamp: string;
  readonly payload: Record<string, unknown>;
}

/** A user, a room or an attachment as Chatkit's v6 API shows it. */
export type ChatkitObject = Record<string, unknown>;

/**
 * What the mapping needs beyond the (opened) log event: lookups the worker answers at delivery
 * time from the log and presence, for the event being delivered
 * (`deliver-webhooks/chatkit-webhook-lookups.ts`). Nothing they answer is stored by the
 * webhooks: personal content is read when delivered.
 */
export interface ChatkitWebhookContext {
  /** The room as the v6 API shows it, with `member_user_ids`, as it was at the event; null when it did not exist then. */
  room(instanceId: string, roomId: string): Promise<ChatkitObject | null>;
  /** The users as the API shows them, as they were at the event; users that did not exist then are left out. */
  users(instanceId: string, userIds: readonly string[]): Promise<ChatkitObject[]>;
  /** Who sent a message and when (an edit's event names neither); null once the message is gone. */
  messageOrigin(instanceId: string, roomId: string, messageId: number): Promise<{ user_id: string; created_at: string; shadow?: true } | null>;
  /**
   * Of `userIds`, those offline for a message sent at `sentAt`; null when presence then is not
   * known any more (presence has no history: a late delivery, a replay), and no
   * `v1.message_sent_user_offline` is made.
   */
  offlineUserIds(instanceId: string, userIds: readonly string[], sentAt: string): Promise<string[] | null>;
  /** An attachment part's attachment as a v6 read shows it (signed links that expire, made at each delivery). */
  attachment(instanceId: string, roomId: string, attachment: { id: string; name?: string; size?: number; custom_data?: unknown }): ChatkitObject;
}

/** The Chatkit webhook event types each log event type can stand for. */
const TYPES_OF_SOURCE: Readonly<Record<string, readonly ChatkitWebhookEventType[]>> = {
  UserCreated: ['v1.users_created'],
  UserDeleted: ['v1.users_deleted'],
  RoomCreated: ['v1.rooms_created'],
  RoomDeleted: ['v1.rooms_deleted'],
  RoomMembersAdded: ['v1.users_added_to_room'],
  RoomMembersRemoved: ['v1.users_removed_from_room', 'v1.user_left_room'],
  MessageSent: ['v1.messages_created', 'v1.message_sent_user_offline'],
  MessageEdited: ['v1.messages_edited'],
  MessageDeleted: ['v1.messages_deleted'],
};

/** The log event types some Chatkit webhook event comes from: what the worker's subscription is filtered to. */
export const WEBHOOK_SOURCE_EVENT_TYPES: readonly string[] = Object.keys(TYPES_OF_SOURCE);

/**
 * A UUID (version 5 layout: SHA-1 of a name) for the webhook event of `type` that the log event
 * `logEventId` stands for: the same on every retry, redelivery and replay, different per type,
 * and shaped as Chatkit's request ids were, so receivers that store it as a UUID keep working.
 */
export const webhookEventId = (logEventId: string, type: ChatkitWebhookEventType): string => {
  const digest = hash('sha1', `parley-webhook-event\u0000${logEventId}\u0000${type}`, 'buffer');
  digest[6] = (digest[6] & 0x0f) | 0x50;
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

/**
 * The Chatkit webhook events one (opened) log event stands for; [] for events no webhook carries.
 * With `wanted`, only events of those types, and none of the lookups the others need (an offline
 * member's push asks presence for every member of the room).
 */
export async function chatkitWebhookEventsOf(
  event: RecordedEvent,
  context: ChatkitWebhookContext,
  wanted?: ReadonlySet<string>,
): Promise<ChatkitWebhookEvent[]> {
  if (wanted && !TYPES_OF_SOURCE[event.type]?.some((t) => wanted.has(t))) return [];
  const all = await eventsOf(event, context, wanted ?? ALL_TYPES);
  return wanted ? all.filter((e) => wanted.has(e.type)) : all;
}

const ALL_TYPES: ReadonlySet<string> = new Set(CHATKIT_WEBHOOK_EVENT_TYPES);

async function eventsOf(event: RecordedEvent, context: ChatkitWebhookContext, wanted: ReadonlySet<string>): Promise<ChatkitWebhookEvent[]> {
  const stream = parseStreamName(event.streamName);
  if (!stream) return [];
  const { instanceId, id: streamId } = stream;
  const timestamp = event.metadata?.occurred_at ?? event.recordedAt;
  const one = (type: ChatkitWebhookEventType, payload: Record<string, unknown>): ChatkitWebhookEvent => ({
    type,
    id: webhookEventId(event.id, type),
    timestamp,
    payload,
  });
  switch (event.type) {
    case 'UserCreated': {
      if (stream.category !== 'user') return [];
      return [one('v1.users_created', { users: [userOf(event as RecordedEvent<UserCreated>)] })];
    }
    case 'UserDeleted':
      return stream.category === 'user' ? [one('v1.users_deleted', { user_ids: [streamId] })] : [];
    case 'RoomCreated': {
      if (stream.category !== 'room') return [];
      return [one('v1.rooms_created', { rooms: [roomOf(event as RecordedEvent<RoomCreated>)] })];
    }
    case 'RoomDeleted':
      return stream.category === 'room' ? [one('v1.rooms_deleted', { room_ids: [streamId] })] : [];
    case 'RoomMembersAdded': {
      if (stream.category !== 'room') return [];
      const ids = (event as RecordedEvent<RoomMembersAdded>).data.members.map((m) => m.user_id);
      const [room, users] = await Promise.all([roomOrId(context, instanceId, streamId), usersOrIds(context, instanceId, ids)]);
      return [one('v1.users_added_to_room', { room, users })];
    }
    case 'RoomMembersRemoved': {
      if (stream.category !== 'room') return [];
      const { user_ids, left } = (event as RecordedEvent<RoomMembersRemoved>).data;
      const [room, users] = await Promise.all([roomOrId(context, instanceId, streamId), usersOrIds(context, instanceId, user_ids)]);
      // Logs written before leaves were recorded: a user removing only themselves left.
      const actor = event.metadata?.actor?.user_id;
      const leave = left ?? (user_ids.length === 1 && actor === user_ids[0]);
      // `user` is what Pusher's own receivers read of a leave, `users` what the migration receiver reads.
      return leave ? [one('v1.user_left_room', { room, user: users[0], users })] : [one('v1.users_removed_from_room', { room, users })];
    }
    case 'MessageSent': {
      if (stream.category !== 'messages') return [];
      const sent = (event as RecordedEvent<MessageSent>).data;
      // A receiver hears what everyone may see: not a message sent under a shadow ban (nor the push it would send).
      if (!shownTo(sent, undefined)) return [];
      const message = {
        id: sent.id,
        user_id: sent.user_id,
        room_id: streamId,
        parts: partsOf(sent.parts, context, instanceId, streamId),
        created_at: sent.created_at,
        updated_at: sent.created_at,
        // A thread reply (docs/api.md, Threads): additive, so an app server tells it from the room's messages.
        ...(sent.parent_id !== undefined && { parent_id: sent.parent_id, ...(sent.also_in_room && { also_in_room: true }) }),
      };
      const events = [one('v1.messages_created', { messages: [message] })];
      const offline = wanted.has('v1.message_sent_user_offline') ? await offlineMembers(context, instanceId, streamId, sent) : null;
      if (offline) {
        const [sender] = await usersOrIds(context, instanceId, [sent.user_id]);
        events.push(one('v1.message_sent_user_offline', { message, sender, room: offline.room, offline_user_ids: offline.userIds }));
      }
      return events;
    }
    case 'MessageEdited': {
      const edited = (event as RecordedEvent<MessageEdited>).data;
      const roomId = edited.room_id ?? (stream.category === 'messages' ? streamId : undefined);
      if (roomId === undefined) return [];
      const origin = await context.messageOrigin(instanceId, roomId, edited.id);
      if (origin && !shownTo(origin, undefined)) return []; // no receiver heard of it
      const message = {
        id: edited.id,
        ...(origin && { user_id: origin.user_id }),
        room_id: roomId,
        parts: partsOf(edited.parts, context, instanceId, roomId),
        ...(origin && { created_at: origin.created_at }),
        updated_at: edited.updated_at,
      };
      return [one('v1.messages_edited', { messages: [message] })];
    }
    case 'MessageDeleted': {
      const deleted = (event as RecordedEvent<MessageDeleted>).data;
      const roomId = deleted.room_id ?? (stream.category === 'messages' ? streamId : undefined);
      if (roomId !== undefined) {
        const origin = await context.messageOrigin(instanceId, roomId, deleted.id);
        if (origin && !shownTo(origin, undefined)) return []; // no receiver heard of it
      }
      return [one('v1.messages_deleted', { message_ids: [deleted.id], ...(roomId !== undefined && { room_id: roomId }) })];
    }
    default:
      return [];
  }
}

/** The projections' folds start from nothing here: one event, one document, kept nowhere. */
const NO_TARGET = { collection: '', id: '' };

/**
 * A user as the API shows it, from its creation (an erased profile reads with an empty name):
 * the users projection's document rendered by the chat API's presenter.
 */
const userOf = (event: RecordedEvent<UserCreated>): ChatkitObject => ({ ...presentUser(usersProjection.evolve(null, event, NO_TARGET)!) });

/**
 * A room as the v6 API shows it, from its creation (the rooms projection's document, the v6
 * presenter); its first members follow as `v1.users_added_to_room`.
 */
const roomOf = (event: RecordedEvent<RoomCreated>): ChatkitObject => ({ ...presentRoom(6, roomsProjection.evolve(null, event, NO_TARGET)!) });

/** v6 parts as a read shows them: link types as they read now, attachments with their links. */
const partsOf = (parts: readonly MessagePart[], context: ChatkitWebhookContext, instanceId: string, roomId: string): ChatkitObject[] =>
  parts.map((p) => ('attachment' in p ? { type: p.type, attachment: context.attachment(instanceId, roomId, p.attachment) } : { ...currentPart(p) }));

/** A room that did not exist then still has its id (the change happened to it). */
const roomOrId = async (context: ChatkitWebhookContext, instanceId: string, roomId: string): Promise<ChatkitObject> =>
  (await context.room(instanceId, roomId)) ?? { id: roomId };

/** In the order asked; a user that did not exist then reads as its id alone. */
const usersOrIds = async (context: ChatkitWebhookContext, instanceId: string, ids: readonly string[]): Promise<ChatkitObject[]> => {
  const found = new Map((await context.users(instanceId, ids)).map((u) => [u.id as string, u]));
  return ids.map((id) => found.get(id) ?? { id });
};

/** The room's members other than the sender who were offline, when any were and it is known. */
const offlineMembers = async (
  context: ChatkitWebhookContext,
  instanceId: string,
  roomId: string,
  sent: MessageSent['data'],
): Promise<{ room: ChatkitObject; userIds: string[] } | null> => {
  const room = await context.room(instanceId, roomId);
  const members = Array.isArray(room?.member_user_ids) ? (room!.member_user_ids as string[]) : [];
  const others = members.filter((id) => id !== sent.user_id);
  if (!room || others.length === 0) return null;
  const offline = await context.offlineUserIds(instanceId, others, sent.created_at);
  return offline && offline.length ? { room, userIds: offline } : null;
};
