import { DomainEvent } from '../../../shared/domain/event';
import { MessagePart } from './message-parts';

/** Written into the event itself: stable across rebuilds and migrations between stores. */
export type MessageId = number;

export type MessageSent = DomainEvent<
  'MessageSent',
  {
    id: MessageId;
    user_id: string;
    /** Tells the sender apart from a later user of the same id (absent in logs written before it was recorded). */
    user_created_at?: string;
    parts: MessagePart[];
    room_created_at: string;
    created_at: string;
    /** Sent under a shadow ban (src/modules/bans): shown to its sender alone, never to anyone else. */
    shadow?: true;
  } & ThreadReplyFields
>;

/**
 * What a thread reply's events carry beside a message's (absent on a message that is no reply):
 * `parent_id` names the thread's first message, in the same room; `also_in_room`: the reply
 * shows in the room's pages and subscriptions too, not only in its thread. `parent_user_id`
 * (on the send alone) names who started the thread, so the thread's participants read without
 * the parent's event.
 */
export interface ThreadReplyFields {
  parent_id?: MessageId;
  also_in_room?: true;
  parent_user_id?: string;
}

/** A reply's edits and deletion: its thread, and `shadow` when it was sent under a shadow ban (its thread shows it to no one else). */
type ReplyChangeFields = Omit<ThreadReplyFields, 'parent_user_id'> & { shadow?: true };
/**
 * Edits and deletions are written to the message's own stream (`message-<instance>.<id>`)
 * with `room_id`; older logs have them in the room's timeline, without it.
 */
export type MessageEdited = DomainEvent<
  'MessageEdited',
  { id: MessageId; room_id?: string; parts: MessagePart[]; updated_at: string } & ReplyChangeFields
>;
/**
 * `tombstone`: deleted through the seed's v2 route, the message stays as a record with text
 * DELETED; deleted through v6, it disappears from fetches. Either way its content is gone.
 */
export type MessageDeleted = DomainEvent<
  'MessageDeleted',
  { id: MessageId; room_id?: string; tombstone: boolean; deleted_at: string } & ReplyChangeFields
>;

export type MessageEvent = MessageSent | MessageEdited | MessageDeleted;

/** A block of message ids reserved by one process for one instance. */
export type MessageIdsReserved = DomainEvent<'MessageIdsReserved', { first: MessageId; last: MessageId }>;

/**
 * A reaction of one user (that incarnation of the user id) to a message, on the message's own
 * stream. `type` is what the user reacted with (an emoji, a shortcode): sealed, as the user
 * chose it. `shadow`: added under a shadow ban (or the removal of such a reaction): shown to
 * its reactor alone.
 */
export type MessageReactionAdded = DomainEvent<
  'MessageReactionAdded',
  { id: MessageId; room_id: string; type: string; user_id: string; user_created_at: string; created_at: string; shadow?: true }
>;
export type MessageReactionRemoved = DomainEvent<
  'MessageReactionRemoved',
  { id: MessageId; room_id: string; type: string; user_id: string; user_created_at: string; removed_at: string; shadow?: true }
>;

export type ReactionEvent = MessageReactionAdded | MessageReactionRemoved;
