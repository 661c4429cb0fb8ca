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
  }
>;
/**
 * Edits and deletions are written to the message's own stream (`message-<instance>.<id>`)
 * with `room_id`; older logs have them in the room's timeline, without it.
 */
export type MessageEdited = DomainEvent<'MessageEdited', { id: MessageId; room_id?: string; parts: MessagePart[]; updated_at: string }>;
/**
 * `tombstone`: deleted through the seed's v2 route, the message stays as a record with text
 * DELETED; deleted through v6, it disappears from fetches. Either way its content is gone.
 */
export type MessageDeleted = DomainEvent<
  'MessageDeleted',
  { id: MessageId; room_id?: string; tombstone: boolean; deleted_at: string }
>;

export type MessageEvent = MessageSent | MessageEdited | MessageDeleted;

/** A block of message ids reserved by one process for one instance. */
export type MessageIdsReserved = DomainEvent<'MessageIdsReserved', { first: MessageId; last: MessageId }>;

/**
 * A reaction of one user (that incarnation of the user id) to a message, on the message's own
 * stream. `type` is what the user reacted with (an emoji, a shortcode): sealed, as the user
 * chose it.
 */
export type MessageReactionAdded = DomainEvent<
  'MessageReactionAdded',
  { id: MessageId; room_id: string; type: string; user_id: string; user_created_at: string; created_at: string }
>;
export type MessageReactionRemoved = DomainEvent<
  'MessageReactionRemoved',
  { id: MessageId; room_id: string; type: string; user_id: string; user_created_at: string; removed_at: string }
>;

export type ReactionEvent = MessageReactionAdded | MessageReactionRemoved;
