import { Decider } from '../../../shared/domain/decider';
import { badRequest, conflict, DomainError, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { AttachmentEvent } from './attachment.events';

/** One stream per attachment: `attachment-<instance>.<attachmentId>`. */
export const attachmentStream = (instanceId: string, attachmentId: string) =>
  streamName('attachment', instanceId, attachmentId);

/** The largest attachment or file accepted, in bytes (5 MiB). */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;

export interface AttachmentState {
  readonly exists: boolean;
  readonly deleted: boolean;
  readonly roomId?: string;
  readonly roomCreatedAt?: string;
  readonly userId?: string;
  readonly contentType?: string;
  readonly contentLength?: number;
  readonly name?: string;
  readonly customData?: unknown;
  readonly fileName?: string;
  readonly upload?: { readonly size: number; readonly sha256: string; readonly blobKey: string };
  /** Its bytes are gone from the blob store. */
  readonly blobRemoved?: boolean;
}

interface NewAttachment {
  id: string;
  roomId: string;
  roomCreatedAt: string;
  userId: string;
  contentType: string;
  name: string;
  customData?: unknown;
  now: string;
}

export type AttachmentCommand =
  /** v6: announce an upload of `contentLength` bytes; the bytes follow on the signed upload URL. */
  | ({ type: 'CreateAttachment'; contentLength: number } & NewAttachment)
  /** The announced bytes were stored under `blobKey`. */
  | { type: 'RecordUpload'; id: string; size: number; sha256: string; blobKey: string; now: string }
  /** Files API: bytes already stored, announced and recorded at once under a file name. */
  | ({ type: 'StoreFile'; size: number; sha256: string; blobKey: string; fileName: string } & NewAttachment)
  | { type: 'DeleteAttachment'; id: string; now: string }
  /**
   * The blob janitor removed the bytes of an attachment that is gone (deleted, or its room or
   * uploader deleted: the read model says which, the attachment's own stream does not know);
   * `blobKey` is empty for one gone before its bytes were uploaded.
   */
  | { type: 'RecordBlobRemoved'; id: string; blobKey: string; now: string };

export const attachmentNotFound = (id: string) => notFound('attachment_not_found', `The attachment "${id}" does not exist`);

/** `size` when known (announced); a streamed body is only known to be over the limit. */
export const tooLarge = (size?: number) =>
  new DomainError(
    'payload_too_large',
    'attachment_too_large',
    `Attachments are limited to ${MAX_ATTACHMENT_BYTES} bytes (5 MiB); this one has ${size ?? 'more'}`,
  );

const created = (c: NewAttachment, contentLength: number, fileName?: string): AttachmentEvent => ({
  type: 'AttachmentCreated',
  data: {
    id: c.id,
    room_id: c.roomId,
    room_created_at: c.roomCreatedAt,
    user_id: c.userId,
    content_type: c.contentType,
    content_length: contentLength,
    name: c.name,
    ...(c.customData !== undefined && { custom_data: c.customData }),
    ...(fileName !== undefined && { file_name: fileName }),
    created_at: c.now,
  },
});

/**
 * An attachment's life: announced (with its exact length), uploaded once (a repeated upload of
 * the same bytes changes nothing, other bytes are refused), deleted (files API only).
 */
export const attachmentDecider: Decider<AttachmentState, AttachmentCommand, AttachmentEvent> = {
  initialState: () => ({ exists: false, deleted: false }),

  evolve(state, event) {
    switch (event.type) {
      case 'AttachmentCreated': {
        const d = event.data;
        return {
          exists: true,
          deleted: false,
          roomId: d.room_id,
          roomCreatedAt: d.room_created_at,
          userId: d.user_id,
          contentType: d.content_type,
          contentLength: d.content_length,
          name: d.name,
          customData: d.custom_data,
          fileName: d.file_name,
        };
      }
      case 'AttachmentUploaded':
        return { ...state, upload: { size: event.data.size, sha256: event.data.sha256, blobKey: event.data.blob_key } };
      case 'AttachmentDeleted':
        return { ...state, deleted: true };
      case 'AttachmentBlobRemoved':
        return { ...state, deleted: true, blobRemoved: true };
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateAttachment':
        if (state.exists) throw conflict('attachment_exists', `The attachment "${command.id}" already exists`);
        if (!Number.isSafeInteger(command.contentLength) || command.contentLength < 0) {
          throw badRequest('invalid_content_length', 'content_length must be a whole number of bytes');
        }
        if (command.contentLength > MAX_ATTACHMENT_BYTES) throw tooLarge(command.contentLength);
        return [created(command, command.contentLength)];

      case 'StoreFile':
        if (state.exists) throw conflict('attachment_exists', `The attachment "${command.id}" already exists`);
        if (command.size > MAX_ATTACHMENT_BYTES) throw tooLarge(command.size);
        return [
          created(command, command.size, command.fileName),
          {
            type: 'AttachmentUploaded',
            data: { id: command.id, size: command.size, sha256: command.sha256, blob_key: command.blobKey, uploaded_at: command.now },
          },
        ];

      case 'RecordUpload':
        if (!state.exists || state.deleted) throw attachmentNotFound(command.id);
        if (command.size !== state.contentLength) {
          throw badRequest(
            'wrong_content_length',
            `The upload must be exactly ${state.contentLength} bytes (content_length), not ${command.size}`,
          );
        }
        if (state.upload) {
          if (state.upload.sha256 === command.sha256) return [];
          throw conflict('already_uploaded', `The attachment "${command.id}" was already uploaded with other bytes`);
        }
        return [
          {
            type: 'AttachmentUploaded',
            data: { id: command.id, size: command.size, sha256: command.sha256, blob_key: command.blobKey, uploaded_at: command.now },
          },
        ];

      case 'DeleteAttachment':
        if (!state.exists || state.deleted) return [];
        return [{ type: 'AttachmentDeleted', data: { id: command.id, deleted_at: command.now } }];

      case 'RecordBlobRemoved':
        // Removing twice (two janitors, a retry after a crash) records it once. A stream that
        // reads empty was wiped with its instance (commands read it as beginning after the
        // wipe): the wipe's tombstone is dropped by recording the removal all the same.
        if (state.blobRemoved || (state.exists && (state.upload?.blobKey ?? '') !== command.blobKey)) return [];
        return [{ type: 'AttachmentBlobRemoved', data: { id: command.id, blob_key: command.blobKey, removed_at: command.now } }];
    }
  },
};
