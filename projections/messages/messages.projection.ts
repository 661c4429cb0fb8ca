import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessagePart } from '../../src/modules/messages/domain/message-parts';
import type { MessageEvent, MessageSent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import { shownIn, shownTo } from '../../src/modules/messages/domain/message-visibility';
import type { Document, ProjectionDefinition, Target } from '../projection';
import type { CollectionSpec } from '../../src/shared/ports/read-model-store.port';
import { byRoom } from '../partitioning';

export const MESSAGES = 'messages';

/** What fetches and room streams show of a deleted message's text (seed: tombstones). */
export const TOMBSTONE_TEXT = 'DELETED';

export interface MessageDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly id: number;
  readonly user_id: string;
  /** Canonical v6 parts, as stored (shown through `currentPart`); blanked when the message is deleted. */
  readonly parts: readonly MessagePart[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at?: string;
  /** Deleted and shown as a tombstone (v2 route) rather than left out (v6 route). */
  readonly tombstone?: boolean;
  /** Shown to everyone (`shownTo` with no viewer) and not deleted without a tombstone: what fetches, replays and unread counts select on. */
  readonly visible: boolean;
  /** A thread reply also shown in the room: its thread's first message. */
  readonly parent_id?: number;
  /** Sent under a shadow ban: shown to its sender alone (`MessagesReadModel`'s `viewer`). */
  readonly shadow?: true;
}

export const messageDocumentId = (instanceId: string, roomId: string, messageId: number) =>
  documentId(instanceId, roomId, String(messageId));

/**
 * Where a projection keeping one document per message (`messageDocumentId`, in `collection`)
 * folds a message's events: its sending, edits and deletion name its document; a room's deletion
 * selects every document of the room. `keeps` says which messages have a document at all (the
 * others' events name none), so the projections sharing this key never differ in how they find
 * a message's document.
 */
export const perMessageTargets = (
  collection: string,
  event: RecordedEvent<MessageEvent | RoomDeleted>,
  keeps: (message: RecordedEvent<MessageEvent>) => boolean,
): Target[] => {
  const stream = parseStreamName(event.streamName);
  if (!stream) return [];
  if (event.type === 'RoomDeleted') return [{ collection, where: { instance_id: stream.instanceId, room_id: stream.id } }];
  if (!keeps(event)) return [];
  // A message is sent into its room's timeline, whose name gives the room. Edits and deletions
  // carry their room (they live in the message's own stream); older logs have them in the room's
  // timeline too.
  const roomId = event.type === 'MessageSent' ? stream.id : (event.data.room_id ?? stream.id);
  return [{ collection, id: messageDocumentId(stream.instanceId, roomId, event.data.id) }];
};

/**
 * A sent message's document: what the messages projection stores and what a live room
 * subscription shows, so a message replayed and the same message live never differ.
 */
export const messageDocumentFrom = (event: RecordedEvent<MessageSent>): MessageDocument => {
  const stream = parseStreamName(event.streamName)!;
  const { data } = event;
  return {
    _id: '',
    instance_id: stream.instanceId,
    room_id: stream.id,
    id: data.id,
    user_id: data.user_id,
    parts: data.parts,
    created_at: data.created_at,
    updated_at: data.created_at,
    // Shown to everyone where it is kept (the room's timeline, or its thread: the collection holding it says where).
    visible: shownTo(data, undefined),
    ...(data.parent_id !== undefined && { parent_id: data.parent_id }),
    ...(data.shadow && { shadow: true as const }),
  };
};

/**
 * A message document's fields as a store may keep them in columns (`CollectionSpec.columns`), in
 * the order the projection writes them (a deletion's fields last). As JSON documents the field
 * names took about a third of a short message's row; a table made as documents by an earlier
 * release is read and written as it is (the store reads its layout from it). The id is a whole
 * number (the key's last part), the times `toISOString`'s strings (SQLite keeps them as numbers).
 */
export const MESSAGE_COLUMNS: NonNullable<CollectionSpec['columns']> = [
  'instance_id',
  'room_id',
  { name: 'id', type: 'integer' },
  'user_id',
  { name: 'parts', type: 'json' },
  { name: 'created_at', type: 'time' },
  { name: 'updated_at', type: 'time' },
  { name: 'visible', type: 'boolean' },
  'parent_id',
  { name: 'shadow', type: 'boolean' },
  { name: 'deleted_at', type: 'time' },
  { name: 'tombstone', type: 'boolean' },
];

/** The fields a message's document id is made of (`messageDocumentId`): a store may key its rows by them. */
export const MESSAGE_KEY: NonNullable<CollectionSpec['key']> = ['instance_id', 'room_id', 'id'];

/**
 * Every room's timeline, paged by message id; deleted content never survives here. A thread
 * reply not also shown in the room is no part of it (the threads projection keeps it).
 */
export const messagesProjection: ProjectionDefinition<MessageEvent | RoomDeleted, MessageDocument> = {
  name: 'messages',
  version: 1,
  collections: [
    {
      name: MESSAGES,
      indexes: [{ fields: ['instance_id', 'room_id', 'visible', 'id'] }, { fields: ['instance_id', 'id'] }],
      columns: MESSAGE_COLUMNS,
      key: MESSAGE_KEY,
    },
  ],
  handles: ['MessageSent', 'MessageEdited', 'MessageDeleted', 'RoomDeleted'],
  partitioning: byRoom,
  destroys: ['MessageEdited', 'MessageDeleted', 'RoomDeleted'],

  targets(event): Target[] {
    return perMessageTargets(MESSAGES, event, (message) => shownIn(message.data, 'room'));
  },

  evolve(doc, event) {
    switch (event.type) {
      case 'MessageSent':
        return messageDocumentFrom(event);
      case 'MessageEdited':
        return doc && !doc.deleted_at ? { ...doc, parts: event.data.parts, updated_at: event.data.updated_at } : doc;
      case 'MessageDeleted': {
        if (!doc) return null;
        const { deleted_at, tombstone } = event.data;
        return {
          ...doc,
          parts: [{ type: 'text/plain', content: TOMBSTONE_TEXT }],
          updated_at: deleted_at,
          deleted_at,
          tombstone,
          visible: tombstone === true && shownTo(doc, undefined),
        };
      }
      case 'RoomDeleted':
        return null;
      default:
        return doc;
    }
  },
};
