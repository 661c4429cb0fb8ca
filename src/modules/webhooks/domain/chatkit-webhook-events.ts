import type { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import type { MessageSent } from '../../messages/domain/message.events';

/**
 * The contract between the webhook worker (`webhooks`) and Chatkit's wire format
 * (`webhook-events`): the event types a webhook may ask for, and the Chatkit webhook events a log
 * event stands for. This version maps `v1.messages_created` only; `webhook-events` owns the full
 * mapping and `ChatkitWebhookContext`.
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

/** What the mapping needs beyond the log event itself (lookups the worker supplies). */
export interface ChatkitWebhookContext {}

/**
 * The log event types some Chatkit webhook event comes from: what the delivery worker, the pull
 * feed and a replay from a time read the log filtered to (an export beyond the contract's two:
 * the full mapping must list every type it reads, or those events are never delivered).
 */
export const WEBHOOK_SOURCE_EVENT_TYPES: readonly string[] = ['MessageSent'];

/**
 * The Chatkit webhook events one (opened) log event stands for; [] for events no webhook carries.
 * With `wanted`, only events of those types.
 */
export async function chatkitWebhookEventsOf(event: RecordedEvent, _context: ChatkitWebhookContext, wanted?: ReadonlySet<string>): Promise<ChatkitWebhookEvent[]> {
  if (event.type !== 'MessageSent' || (wanted && !wanted.has('v1.messages_created'))) return [];
  const sent = (event as RecordedEvent<MessageSent>).data;
  const roomId = parseStreamName(event.streamName)?.id ?? '';
  return [
    {
      type: 'v1.messages_created',
      id: event.id,
      timestamp: sent.created_at,
      payload: {
        messages: [{ id: sent.id, user_id: sent.user_id, room_id: roomId, parts: sent.parts, created_at: sent.created_at, updated_at: sent.created_at }],
      },
    },
  ];
}
