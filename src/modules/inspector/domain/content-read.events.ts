import { DomainEvent } from '../../../shared/domain/event';

/**
 * An operator read the content of a room's messages through the console's admin route. It
 * names who (the event's actor), the room and which messages, never what they said: message
 * ids and counts only, which no delete or erasure needs to shred.
 */
export type MessageContentRead = DomainEvent<
  'MessageContentRead',
  {
    readonly room_id: string;
    /** How many messages the answer showed with their content. */
    readonly message_count: number;
    /** The lowest and highest ids among them (null when the page was empty). */
    readonly first_message_id: number | null;
    readonly last_message_id: number | null;
    /** Present when the page was a thread's replies: the thread's first message. */
    readonly parent_id?: number;
    readonly read_at: string;
  }
>;

export type ContentReadEvent = MessageContentRead;
