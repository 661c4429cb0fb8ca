import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { CursorEvent } from './cursor.events';

export const CURSOR_STREAM_CATEGORY = 'cursor';

/** One stream per user holds all of the user's read cursors. */
export const cursorStream = (instanceId: string, userId: string) => streamName(CURSOR_STREAM_CATEGORY, instanceId, userId);

/** The only cursor type so far (the `0` of `/cursors/0`). */
export const READ_CURSOR_TYPE = 0;

export interface RoomCursor {
  readonly position: number;
  /** The `created_at` of the room the position was set in. */
  readonly roomCreatedAt: string;
}

export interface CursorState {
  /** The `created_at` of the user the cursors belong to; null before the first cursor. */
  readonly userCreatedAt: string | null;
  /** room id → cursor. */
  readonly cursors: ReadonlyMap<string, RoomCursor>;
}

export type CursorCommand = {
  type: 'SetReadCursor';
  room_id: string;
  position: number;
  /** The `created_at` of the (existing) user whose cursor this is. */
  user_created_at: string;
  /** The `created_at` of the (existing) room. */
  room_created_at: string;
  now: string;
};

/** The current position of a user's cursor in a room, unless it was set for an earlier user or room of the same id. */
export const currentPosition = (
  state: CursorState,
  roomId: string,
  userCreatedAt: string,
  roomCreatedAt: string,
): number | undefined => {
  if (state.userCreatedAt !== userCreatedAt) return undefined;
  const cursor = state.cursors.get(roomId);
  return cursor?.roomCreatedAt === roomCreatedAt ? cursor.position : undefined;
};

/**
 * Read cursors only move forward: setting a position at or below the current one is
 * accepted and decides nothing, so a late, debounced client update cannot move it back.
 * A re-created user or room (same id, new `created_at`) starts from no cursor.
 */
export const cursorDecider: Decider<CursorState, CursorCommand, CursorEvent> = {
  initialState: () => ({ userCreatedAt: null, cursors: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'ReadCursorSet': {
        const { room_id, position, user_created_at, room_created_at } = event.data;
        const cursors = new Map(user_created_at === state.userCreatedAt ? state.cursors : []);
        cursors.set(room_id, { position, roomCreatedAt: room_created_at });
        return { userCreatedAt: user_created_at, cursors };
      }
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'SetReadCursor': {
        const { room_id, position, user_created_at, room_created_at, now } = command;
        const current = currentPosition(state, room_id, user_created_at, room_created_at);
        if (current !== undefined && position <= current) return [];
        return [
          { type: 'ReadCursorSet', data: { room_id, position, user_created_at, room_created_at, updated_at: now } },
        ];
      }
    }
  },
};
