import { DomainEvent } from '../../../shared/domain/event';

/**
 * A user's read cursor in a room moved forward to `position` (the id of the latest message
 * read). `user_created_at` tells apart a user from an earlier, deleted user of the same id:
 * cursors do not outlive their user.
 */
export type ReadCursorSet = DomainEvent<
  'ReadCursorSet',
  { room_id: string; position: number; user_created_at: string; updated_at: string }
>;

export type CursorEvent = ReadCursorSet;

export const CURSOR_EVENT_TYPES: CursorEvent['type'][] = ['ReadCursorSet'];
