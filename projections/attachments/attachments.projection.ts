import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { AttachmentEvent } from '../../src/modules/attachments/domain/attachment.events';
import type { MessagePart } from '../../src/modules/messages/domain/message-parts';
import type { MessageEvent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const ATTACHMENTS = 'attachments';

export interface AttachmentDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly content_type: string;
  readonly content_length: number;
  readonly name: string;
  readonly custom_data?: unknown;
  /** `files` for uploads through the files API (v2 data attachments), `attachments` for the v6 flow. */
  readonly origin: 'attachments' | 'files';
  readonly file_name?: string;
  readonly created_at: string;
  readonly uploaded: boolean;
  readonly size?: number;
  readonly sha256?: string;
  readonly blob_key?: string;
  readonly uploaded_at?: string;
  /**
   * The message that first carried it: it goes when that message is deleted, or edited
   * without it. null: no message has carried it; absent: folded before this was recorded
   * (unknown until the read model is rebuilt), so it is kept as if a message carried it.
   */
  readonly message_id?: number | null;
  /**
   * Gone (deleted, or its room or uploader deleted): no read shows it, and the blob janitor
   * removes its bytes (if any), then records its end, which removes the document.
   */
  readonly deleted: boolean;
  readonly deleted_at?: string;
}

export const attachmentDocumentId = (instanceId: string, attachmentId: string) => documentId(instanceId, attachmentId);

/**
 * Gone: hidden from reads, without what people wrote (its name, file name and custom data),
 * which go at once; kept as a tombstone until the blob janitor has recorded its end
 * (AttachmentBlobRemoved, which destroys the data key its names are sealed under in the log),
 * with or without bytes to remove: an attachment announced and never uploaded ends the same way,
 * and bytes uploaded late are removed.
 */
export const goneAttachment = (doc: AttachmentDocument | null, at: string): AttachmentDocument | null => {
  if (!doc) return null;
  if (doc.deleted) return doc;
  const { custom_data: _customData, file_name: _fileName, ...kept } = doc;
  return { ...kept, name: '', deleted: true, deleted_at: at };
};

/** The attachments a message's parts carry, by id. */
const attachmentIdsIn = (parts: readonly MessagePart[]): string[] =>
  parts.flatMap((part) => ('attachment' in part && typeof part.attachment?.id === 'string' ? [part.attachment.id] : []));

/**
 * Attachments and files by id, by room and file name, and by uploader: what download links,
 * refresh calls and the files API read. Deleting a file, the message that first carried it
 * (or editing that message without it), its room (its messages go with it), or its uploader
 * (for files API uploads, and attachments no message carries; a user's messages stay, with
 * what they carry) leaves a tombstone (`deleted`) until the blob janitor has removed its
 * bytes and recorded its end (AttachmentBlobRemoved): so no blob and no data key is left
 * behind, even across restarts, and a rebuild finds what any earlier version left behind.
 *
 * Version 3 folds the log again: read models folded before the link to messages was recorded
 * (`message_id` absent) are linked, and the v6 attachments of uploaders deleted earlier that no
 * message carried, and attachments gone before they were uploaded, become tombstones.
 */
export const attachmentsProjection: ProjectionDefinition<AttachmentEvent | MessageEvent | RoomDeleted | UserDeleted, AttachmentDocument> = {
  name: 'attachments',
  version: 3,
  collections: [
    {
      name: ATTACHMENTS,
      indexes: [
        { fields: ['instance_id', 'room_id', 'file_name'] },
        { fields: ['instance_id', 'user_id', 'origin'] },
        { fields: ['deleted'] },
        { fields: ['instance_id', 'message_id'] },
      ],
    },
  ],
  handles: [
    'AttachmentCreated',
    'AttachmentUploaded',
    'AttachmentDeleted',
    'AttachmentBlobRemoved',
    'MessageSent',
    'MessageEdited',
    'MessageDeleted',
    'RoomDeleted',
    'UserDeleted',
  ],
  destroys: ['AttachmentDeleted', 'AttachmentBlobRemoved', 'MessageEdited', 'MessageDeleted', 'RoomDeleted', 'UserDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    const byId = (ids: readonly string[]): Target[] =>
      ids.map((id) => ({ collection: ATTACHMENTS, id: attachmentDocumentId(stream.instanceId, id) }));
    const carriedBy = (messageId: number): Target => ({ collection: ATTACHMENTS, where: { instance_id: stream.instanceId, message_id: messageId } });
    switch (event.type) {
      case 'RoomDeleted':
        if (stream.category !== 'room') return [];
        return [{ collection: ATTACHMENTS, where: { instance_id: stream.instanceId, room_id: stream.id } }];
      case 'UserDeleted':
        if (stream.category !== 'user') return [];
        return [{ collection: ATTACHMENTS, where: { instance_id: stream.instanceId, user_id: stream.id } }];
      case 'MessageSent':
        return byId(attachmentIdsIn(event.data.parts));
      case 'MessageEdited':
        // What it carried (gone unless still in the new parts), and what the new parts carry.
        return [carriedBy(event.data.id), ...byId(attachmentIdsIn(event.data.parts))];
      case 'MessageDeleted':
        return [carriedBy(event.data.id)];
    }
    if (stream.category !== 'attachment') return [];
    return [{ collection: ATTACHMENTS, id: attachmentDocumentId(stream.instanceId, stream.id) }];
  },

  evolve(doc, event) {
    switch (event.type) {
      case 'AttachmentCreated': {
        const stream = parseStreamName(event.streamName)!;
        const { data } = event;
        return {
          _id: '',
          instance_id: stream.instanceId,
          id: stream.id,
          room_id: data.room_id,
          user_id: data.user_id,
          content_type: data.content_type,
          content_length: data.content_length,
          name: data.name,
          ...(data.custom_data !== undefined && { custom_data: data.custom_data }),
          origin: data.file_name !== undefined ? 'files' : 'attachments',
          ...(data.file_name !== undefined && { file_name: data.file_name }),
          created_at: data.created_at,
          uploaded: false,
          message_id: null,
          deleted: false,
        } satisfies AttachmentDocument;
      }
      case 'AttachmentUploaded': {
        // Uploaded after it was gone (its room deleted): it stays a tombstone, so the bytes are removed.
        if (!doc) return null;
        const { size, sha256, blob_key, uploaded_at } = event.data;
        return { ...doc, uploaded: true, size, sha256, blob_key, uploaded_at } satisfies AttachmentDocument;
      }
      case 'AttachmentDeleted':
        return goneAttachment(doc, event.data.deleted_at);
      case 'MessageSent':
        return doc && !doc.deleted && doc.message_id == null ? { ...doc, message_id: event.data.id } : doc;
      case 'MessageEdited': {
        if (!doc || doc.deleted) return doc;
        if (doc.message_id === event.data.id && !attachmentIdsIn(event.data.parts).includes(doc.id)) return goneAttachment(doc, event.data.updated_at);
        return doc.message_id == null ? { ...doc, message_id: event.data.id } : doc;
      }
      case 'MessageDeleted':
        return goneAttachment(doc, event.data.deleted_at);
      case 'UserDeleted':
        // A user's messages stay, and with them the attachments they carry (or may carry).
        if (doc && doc.origin === 'attachments' && doc.message_id !== null) return doc;
        return goneAttachment(doc, event.data.deleted_at ?? event.recordedAt);
      case 'RoomDeleted':
        return goneAttachment(doc, event.data.deleted_at ?? event.recordedAt);
      case 'AttachmentBlobRemoved':
        return null;
      default:
        return doc;
    }
  },
};

/**
 * The version before, kept while version 3 builds beside it so that an upgrade serves
 * throughout (docs/upgrades.md); it folds new events as version 3 does. A later release drops
 * it, then `attachments_v2` can be dropped.
 */
export const attachmentsProjectionV2: typeof attachmentsProjection = { ...attachmentsProjection, version: 2 };
