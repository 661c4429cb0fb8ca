import { DomainEvent } from '../../../shared/domain/event';

/**
 * A message pinned in its room (again: its `until` changed), on the room's pins stream
 * (`pins-<instance>.<room>`). `room_created_at`: the incarnation of the room, so a room created
 * again with the same id starts without the pins of the one before. Ids and times only: nothing
 * personal to seal. `shadow`: pinned (or unpinned, by `unpinned_by`) under a shadow ban: the
 * change shows to that user alone, everyone else's pins stay as they were.
 */
export type MessagePinned = DomainEvent<
  'MessagePinned',
  { room_id: string; room_created_at: string; message_id: number; pinned_by?: string; pinned_at: string; until?: string; shadow?: true }
>;
export type MessageUnpinned = DomainEvent<
  'MessageUnpinned',
  { room_id: string; room_created_at: string; message_id: number; unpinned_at: string; unpinned_by?: string; shadow?: true }
>;

export type PinEvent = MessagePinned | MessageUnpinned;

/** Who changed a pin and whether under a shadow ban, as `shownTo` (message-visibility.ts) reads them. */
export const pinChangeFlags = (event: PinEvent): { user_id?: string; shadow?: true } => {
  const userId = event.type === 'MessagePinned' ? event.data.pinned_by : event.data.unpinned_by;
  return { ...(userId !== undefined && { user_id: userId }), ...(event.data.shadow && { shadow: event.data.shadow }) };
};
