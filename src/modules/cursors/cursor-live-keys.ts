import type { RecordedEvent } from '../../shared/domain/event';
import { cursorSetOf } from './domain/cursor.decider';

/** The LiveLog key under which every `ReadCursorSet` of a room is delivered. */
export const roomCursorsKey = (instanceId: string, roomId: string) => `read-cursors-room:${instanceId}.${roomId}`;

/** The LiveLog key under which every `ReadCursorSet` of a user is delivered (one stream per room holds each). */
export const userCursorsKey = (instanceId: string, userId: string) => `read-cursors-user:${instanceId}.${userId}`;

/** Routes each cursor set to its room's and its user's key. */
export const routeCursorSets = (event: RecordedEvent): readonly string[] => {
  const set = cursorSetOf(event);
  return set ? [roomCursorsKey(set.instanceId, set.roomId), userCursorsKey(set.instanceId, set.userId)] : [];
};
