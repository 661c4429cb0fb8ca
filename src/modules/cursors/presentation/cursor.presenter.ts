import type { RecordedEvent } from '../../../shared/domain/event';
import type { ReadCursorDocument } from '../../../../projections/cursors/cursors.projection';
import { cursorSetOf, READ_CURSOR_TYPE } from '../domain/cursor.decider';

/** A read cursor as the API and the subscriptions return it (wire study §2.2, §4). */
export interface ReadCursor {
  readonly cursor_type: 0;
  readonly room_id: string;
  readonly user_id: string;
  /** The id of the latest message read. */
  readonly position: number;
  readonly updated_at: string;
}

export const presentCursor = (doc: ReadCursorDocument): ReadCursor => ({
  cursor_type: READ_CURSOR_TYPE,
  room_id: doc.room_id,
  user_id: doc.user_id,
  position: doc.position,
  updated_at: doc.updated_at,
});

/** The cursor a recorded `ReadCursorSet` set, or null for any other event. */
export const cursorOfEvent = (event: RecordedEvent): ReadCursor | null => {
  const set = cursorSetOf(event);
  if (!set) return null;
  const { data } = set;
  return {
    cursor_type: READ_CURSOR_TYPE,
    room_id: set.roomId,
    user_id: set.userId,
    position: data.position,
    updated_at: data.updated_at,
  };
};
