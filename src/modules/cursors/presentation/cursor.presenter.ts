import type { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import type { ReadCursorDocument } from '../../../../projections/cursors/cursors.projection';
import { CURSOR_STREAM_CATEGORY, READ_CURSOR_TYPE } from '../domain/cursor.decider';
import type { ReadCursorSet } from '../domain/cursor.events';

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
  if (event.type !== 'ReadCursorSet') return null;
  const stream = parseStreamName(event.streamName);
  if (!stream || stream.category !== CURSOR_STREAM_CATEGORY) return null;
  const data = event.data as ReadCursorSet['data'];
  return {
    cursor_type: READ_CURSOR_TYPE,
    room_id: data.room_id,
    user_id: stream.id,
    position: data.position,
    updated_at: data.updated_at,
  };
};
