import { DomainEvent } from '../../../shared/domain/event';

/**
 * A user's read cursor in a room moved forward to `position` (the id of the latest message
 * read). `user_created_at` and `room_created_at` tell apart a user or a room from an earlier,
 * deleted one of the same id: cursors do not outlive their user or their room.
 * `user_id` is absent from events of the legacy per-user streams, whose name holds it, and
 * `room_created_at` from the first of those, written before it was recorded.
 */
export type ReadCursorSet = DomainEvent<
  'ReadCursorSet',
  { room_id: string; user_id?: string; position: number; user_created_at: string; room_created_at?: string; updated_at: string }
>;

export type CursorEvent = ReadCursorSet;

export const CURSOR_EVENT_TYPES: CursorEvent['type'][] = ['ReadCursorSet'];
