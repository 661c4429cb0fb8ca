import { Decider } from '../../../shared/domain/decider';
import { RecordedEvent } from '../../../shared/domain/event';
import { documentId, parseStreamName, streamName } from '../../../shared/domain/streams';
import { CursorEvent, ReadCursorSet } from './cursor.events';

/**
 * One stream per user and room (`readcursor-<inst>.["<user>","<room>"]`): its state is the
 * newest set alone, so a decision reads one event however many cursors the user has moved.
 * The id is a JSON array because user and room ids may hold any character.
 */
export const CURSOR_STREAM_CATEGORY = 'readcursor';
/** Data directories written before hold one stream per user (`cursor-<inst>.<user>`) with all of the user's cursors; nothing is appended to them any more. */
export const LEGACY_CURSOR_STREAM_CATEGORY = 'cursor';

export const cursorStream = (instanceId: string, userId: string, roomId: string) =>
  streamName(CURSOR_STREAM_CATEGORY, instanceId, documentId(userId, roomId));

export const legacyCursorStream = (instanceId: string, userId: string) =>
  streamName(LEGACY_CURSOR_STREAM_CATEGORY, instanceId, userId);

/** The only cursor type so far (the `0` of `/cursors/0`). */
export const READ_CURSOR_TYPE = 0;

/** Whose cursor in which room a recorded `ReadCursorSet` of either stream kind moved, or null for any other event. */
export const cursorSetOf = (
  event: RecordedEvent,
): { instanceId: string; userId: string; roomId: string; data: ReadCursorSet['data'] } | null => {
  if (event.type !== 'ReadCursorSet') return null;
  const stream = parseStreamName(event.streamName);
  if (!stream) return null;
  const data = event.data as ReadCursorSet['data'];
  if (stream.category === CURSOR_STREAM_CATEGORY && typeof data.user_id === 'string')
    return { instanceId: stream.instanceId, userId: data.user_id, roomId: data.room_id, data };
  if (stream.category === LEGACY_CURSOR_STREAM_CATEGORY)
    return { instanceId: stream.instanceId, userId: stream.id, roomId: data.room_id, data };
  return null;
};

/** A user's cursor in one room: the newest set, or null before the first. */
export interface RoomCursor {
  readonly position: number;
  /** The `created_at` of the user the cursor belongs to. */
  readonly userCreatedAt: string;
  /** The `created_at` of the room the position was set in; absent from sets written before it was recorded, which no room's cursor continues. */
  readonly roomCreatedAt: string | undefined;
}

export type CursorState = RoomCursor | null;

export type CursorCommand = {
  type: 'SetReadCursor';
  room_id: string;
  user_id: string;
  position: number;
  /** The `created_at` of the (existing) user whose cursor this is. */
  user_created_at: string;
  /** The `created_at` of the (existing) room. */
  room_created_at: string;
  /** The newest set of this room in the user's legacy stream, when the per-room stream has none yet. */
  legacy: RoomCursor | null;
  now: string;
};

/** The current position of a cursor, unless it was set for an earlier user or room of the same id. */
export const currentPosition = (cursor: RoomCursor | null, userCreatedAt: string, roomCreatedAt: string): number | undefined =>
  cursor && cursor.userCreatedAt === userCreatedAt && cursor.roomCreatedAt === roomCreatedAt ? cursor.position : undefined;

/** The cursor a `ReadCursorSet` leaves. */
export const roomCursorOf = (data: ReadCursorSet['data']): RoomCursor => ({
  position: data.position,
  userCreatedAt: data.user_created_at,
  roomCreatedAt: data.room_created_at,
});

/**
 * Read cursors only move forward: setting a position at or below the current one is
 * accepted and decides nothing, so a late, debounced client update cannot move it back.
 * A re-created user or room (same id, new `created_at`) starts from no cursor. Until its
 * stream has a set, the room's cursor is the one the legacy per-user stream left.
 */
export const cursorDecider: Decider<CursorState, CursorCommand, CursorEvent> = {
  initialState: () => null,

  evolve(state, event) {
    return event.type === 'ReadCursorSet' ? roomCursorOf(event.data) : state;
  },

  // Each set replaces the whole state: a load reads the newest event only.
  foldsFrom: () => true,

  decide(command, state) {
    switch (command.type) {
      case 'SetReadCursor': {
        const { room_id, user_id, position, user_created_at, room_created_at, legacy, now } = command;
        const current = currentPosition(state ?? legacy, user_created_at, room_created_at);
        if (current !== undefined && position <= current) return [];
        return [
          { type: 'ReadCursorSet', data: { room_id, user_id, position, user_created_at, room_created_at, updated_at: now } },
        ];
      }
    }
  },
};
