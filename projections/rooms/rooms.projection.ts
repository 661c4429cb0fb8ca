import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageSent } from '../../src/modules/messages/domain/message.events';
import type { RoomCreated, RoomDeleted, RoomUpdated } from '../../src/modules/rooms/domain/room.events';
import type { Document, ProjectionDefinition } from '../projection';
import { shownIn, visibleTo } from '../../src/modules/messages/domain/message-visibility';

export const ROOMS = 'rooms';

export interface RoomDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly created_by_id?: string;
  readonly custom_data?: Record<string, unknown>;
  readonly push_notification_title_override?: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** When the newest message was sent (chat v4+ rooms carry it). */
  readonly last_message_at?: string;
}

export const roomDocumentId = (instanceId: string, roomId: string) => documentId(instanceId, roomId);

/** Rooms as the API returns them, listed by id. Messages streams (`messages-<instance>.<room>`) touch `last_message_at`. */
export const roomsProjection: ProjectionDefinition<RoomCreated | RoomUpdated | RoomDeleted | MessageSent, RoomDocument> = {
  name: 'rooms',
  version: 1,
  collections: [
    {
      name: ROOMS,
      indexes: [{ fields: ['instance_id', 'id'] }, { fields: ['instance_id', 'private', 'id'] }],
    },
  ],
  handles: ['RoomCreated', 'RoomUpdated', 'RoomDeleted', 'MessageSent'],
  destroys: ['RoomDeleted'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    // A reply shown only in its thread is not the room's last message (old clients could not show it).
    if (event.type === 'MessageSent' && !shownIn(event.data, 'room')) return [];
    return stream ? [{ collection: ROOMS, id: roomDocumentId(stream.instanceId, stream.id) }] : [];
  },

  evolve(doc, event) {
    switch (event.type) {
      case 'RoomCreated': {
        const { data } = event;
        return {
          _id: '',
          instance_id: parseStreamName(event.streamName)!.instanceId,
          id: data.id,
          name: data.name,
          private: data.private,
          ...(data.created_by_id !== undefined && { created_by_id: data.created_by_id }),
          ...(data.custom_data !== undefined && { custom_data: data.custom_data }),
          ...(data.push_notification_title_override !== undefined && {
            push_notification_title_override: data.push_notification_title_override,
          }),
          created_at: data.created_at,
          updated_at: data.created_at,
        } satisfies RoomDocument;
      }
      case 'RoomUpdated': {
        if (!doc) return null;
        const { name, private: isPrivate, custom_data, push_notification_title_override: override, updated_at } = event.data;
        const next: RoomDocument = {
          ...doc,
          updated_at,
          ...(name !== undefined && { name }),
          ...(isPrivate !== undefined && { private: isPrivate }),
          ...(custom_data !== undefined && { custom_data }),
          ...(override != null && { push_notification_title_override: override }),
        };
        if (override !== null) return next;
        // null clears the override; absent leaves it.
        const { push_notification_title_override: _cleared, ...cleared } = next;
        return cleared;
      }
      case 'RoomDeleted':
        return null;
      case 'MessageSent':
        // The room's last message time is everyone's: a message not shown to everyone leaves it.
        if (!visibleTo(event.data, 'room', undefined)) return doc;
        return doc ? { ...doc, last_message_at: event.data.created_at } : null;
      default:
        return doc;
    }
  },
};
