import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const MESSAGES = 'messages';

/** What fetches and room streams show of a deleted message's text (seed: tombstones). */
export const TOMBSTONE_TEXT = 'DELETED';

export interface MessageDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly id: number;
  readonly user_id: string;
  /** Canonical v6 parts; blanked when the message is deleted. */
  readonly parts: readonly Record<string, unknown>[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at?: string;
  /** Deleted and shown as a tombstone (v2 route) rather than left out (v6 route). */
  readonly tombstone?: boolean;
  /** false once deleted without a tombstone: fetches and replays skip it. */
  readonly visible: boolean;
}

export const messageDocumentId = (instanceId: string, roomId: string, messageId: number) =>
  documentId(instanceId, roomId, String(messageId));

type Data = Record<string, any>;

/** Every room's timeline, paged by message id; deleted content never survives here. */
export const messagesProjection: ProjectionDefinition = {
  name: 'messages',
  version: 1,
  collections: [
    {
      name: MESSAGES,
      indexes: [{ fields: ['instance_id', 'room_id', 'visible', 'id'] }, { fields: ['instance_id', 'id'] }],
    },
  ],
  handles: ['MessageSent', 'MessageEdited', 'MessageDeleted', 'RoomDeleted'],

  targets(event: RecordedEvent): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    if (event.type === 'RoomDeleted') {
      return [{ collection: MESSAGES, where: { instance_id: stream.instanceId, room_id: stream.id } }];
    }
    // Edits and deletions carry their room (they live in the message's own stream); older
    // logs have them in the room's timeline, whose name gives the room.
    const data = event.data as Data;
    const roomId = event.type === 'MessageSent' ? stream.id : (data.room_id ?? stream.id);
    return [{ collection: MESSAGES, id: messageDocumentId(stream.instanceId, roomId, data.id) }];
  },

  evolve(document, event) {
    const doc = document as MessageDocument | null;
    const data = event.data as Data;
    switch (event.type) {
      case 'MessageSent': {
        const stream = parseStreamName(event.streamName)!;
        return {
          _id: '',
          instance_id: stream.instanceId,
          room_id: stream.id,
          id: data.id,
          user_id: data.user_id,
          parts: data.parts,
          created_at: data.created_at,
          updated_at: data.created_at,
          visible: true,
        } satisfies MessageDocument;
      }
      case 'MessageEdited':
        return doc && !doc.deleted_at ? { ...doc, parts: data.parts, updated_at: data.updated_at } : doc;
      case 'MessageDeleted':
        if (!doc) return null;
        return {
          ...doc,
          parts: [{ type: 'text/plain', content: TOMBSTONE_TEXT }],
          updated_at: data.deleted_at,
          deleted_at: data.deleted_at,
          tombstone: data.tombstone,
          visible: data.tombstone === true,
        };
      case 'RoomDeleted':
        return null;
      default:
        return doc;
    }
  },
};
