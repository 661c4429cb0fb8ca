import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { CursorEvent } from './cursor.events';

export const CURSOR_STREAM_CATEGORY = 'cursor';

/** One stream per user holds all of the user's read cursors. */
export const cursorStream = (instanceId: string, userId: string) => streamName(CURSOR_STREAM_CATEGORY, instanceId, userId);

/** The only cursor type so far (the `0` of `/cursors/0`). */
export const READ_CURSOR_TYPE = 0;

export interface CursorState {
  /** The `created_at` of the user the positions belong to; null before the first cursor. */
  readonly userCreatedAt: string | null;
  /** room id → position. */
  readonly positions: ReadonlyMap<string, number>;
}

export type CursorCommand = {
  type: 'SetReadCursor';
  room_id: string;
  position: number;
  /** The `created_at` of the (existing) user whose cursor this is. */
  user_created_at: string;
  now: string;
};

/** The position of a room's cursor for the current user, if one was set. */
export const currentPosition = (state: CursorState, roomId: string, userCreatedAt: string): number | undefined =>
  state.userCreatedAt === userCreatedAt ? state.positions.get(roomId) : undefined;

/**
 * Read cursors only move forward: setting a position at or below the current one is
 * accepted and decides nothing, so a late, debounced client update cannot move it back.
 */
export const cursorDecider: Decider<CursorState, CursorCommand, CursorEvent> = {
  initialState: () => ({ userCreatedAt: null, positions: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'ReadCursorSet': {
        const { room_id, position, user_created_at } = event.data;
        // A cursor of a re-created user starts the user's cursors afresh.
        const positions = new Map(user_created_at === state.userCreatedAt ? state.positions : []);
        positions.set(room_id, position);
        return { userCreatedAt: user_created_at, positions };
      }
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'SetReadCursor': {
        const { room_id, position, user_created_at, now } = command;
        const current = currentPosition(state, room_id, user_created_at);
        if (current !== undefined && position <= current) return [];
        return [{ type: 'ReadCursorSet', data: { room_id, position, user_created_at, updated_at: now } }];
      }
    }
  },
};
