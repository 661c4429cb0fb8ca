import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import { cursorSetOf } from '../../src/modules/cursors/domain/cursor.decider';
import type { ReadCursorSet } from '../../src/modules/cursors/domain/cursor.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { byRoom } from '../partitioning';

export const READ_CURSORS = 'read_cursors';

export interface ReadCursorDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly cursor_type: 0;
  readonly position: number;
  readonly updated_at: string;
}

export const readCursorDocumentId = (instanceId: string, roomId: string, userId: string) =>
  documentId(instanceId, roomId, userId);

/**
 * Read cursors by room and by user, from the per-room cursor streams and the legacy per-user
 * ones alike. The decider only lets positions move forward (a room's stream starts from where
 * the legacy stream left it), so each accepted set replaces the document. A deleted room or a deleted user takes its cursors
 * with it (selected by field, as the memberships do).
 */
export const cursorsProjection: ProjectionDefinition<ReadCursorSet | RoomDeleted | UserDeleted, ReadCursorDocument> = {
  name: 'read_cursors',
  version: 1,
  collections: [
    {
      name: READ_CURSORS,
      // Each ends with the other id: a user's cursors by room id, a room's by user id, paged (the console).
      indexes: [{ fields: ['instance_id', 'user_id', 'room_id'] }, { fields: ['instance_id', 'room_id', 'user_id'] }],
    },
  ],
  handles: ['ReadCursorSet', 'RoomDeleted', 'UserDeleted'],
  partitioning: byRoom,

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'ReadCursorSet': {
        const set = cursorSetOf(event);
        return set ? [{ collection: READ_CURSORS, id: readCursorDocumentId(set.instanceId, set.roomId, set.userId) }] : [];
      }
      case 'RoomDeleted':
        if (stream.category !== 'room') return [];
        return [{ collection: READ_CURSORS, where: { instance_id: stream.instanceId, room_id: stream.id } }];
      case 'UserDeleted':
        if (stream.category !== 'user') return [];
        return [{ collection: READ_CURSORS, where: { instance_id: stream.instanceId, user_id: stream.id } }];
      default:
        return [];
    }
  },

  evolve(_document, event) {
    const set = cursorSetOf(event);
    if (!set) return null;
    return {
      _id: '',
      instance_id: set.instanceId,
      room_id: set.roomId,
      user_id: set.userId,
      cursor_type: 0,
      position: set.data.position,
      updated_at: set.data.updated_at,
    } satisfies ReadCursorDocument;
  },
};
