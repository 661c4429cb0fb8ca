import { Decider } from '../../../shared/domain/decider';
import { unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { ThreadReadCursorSet } from './thread.events';

/** One user's read cursor in one thread: a short stream of its own (message ids are unique per instance). */
export const threadCursorStream = (instanceId: string, parentId: number, userId: string) =>
  streamName('threadcursor', instanceId, `${parentId}.${userId}`);

export interface ThreadCursorState {
  /** The position in the room incarnation it was set in (a room created again starts from nothing). */
  readonly position: number;
  readonly roomCreatedAt: string | null;
}

export interface SetThreadCursor {
  readonly type: 'SetThreadCursor';
  readonly roomId: string;
  readonly roomCreatedAt: string;
  readonly parentId: number;
  readonly userId: string;
  readonly position: number;
  readonly now: string;
}

/**
 * A thread's read cursor only moves forward, as a room's does: a position at or below the one
 * set changes nothing (a client on a slower connection cannot mark read replies unread again).
 */
export const threadCursorDecider: Decider<ThreadCursorState, SetThreadCursor, ThreadReadCursorSet> = {
  initialState: () => ({ position: 0, roomCreatedAt: null }),
  foldsFrom: () => true,
  evolve: (_state, event) => ({ position: event.data.position, roomCreatedAt: event.data.room_created_at }),
  decide(command, state) {
    if (!Number.isSafeInteger(command.position) || command.position < 0) {
      throw unprocessable('invalid_position', 'position must be a reply id (a whole number)');
    }
    if (state.roomCreatedAt === command.roomCreatedAt && command.position <= state.position) return [];
    const { roomId, roomCreatedAt, parentId, userId, position, now } = command;
    return [
      {
        type: 'ThreadReadCursorSet',
        data: { room_id: roomId, room_created_at: roomCreatedAt, parent_id: parentId, user_id: userId, position, updated_at: now },
      },
    ];
  },
};
