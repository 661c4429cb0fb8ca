import { DomainEvent } from '../../../shared/domain/event';

/**
 * An attachment announced for a room (v6 `POST /rooms/:r/attachments`, or a files API upload,
 * which also names it `file_name`). `room_created_at` tells the room apart from an earlier
 * room of the same id.
 */
export type AttachmentCreated = DomainEvent<
  'AttachmentCreated',
  {
    id: string;
    room_id: string;
    room_created_at: string;
    user_id: string;
    content_type: string;
    content_length: number;
    name: string;
    custom_data?: unknown;
    /** Set for uploads through the files API (v2 data attachments): the name it is stored under in its room. */
    file_name?: string;
    created_at: string;
  }
>;

/** The bytes arrived whole: `blob_key` names them in the blob store, `sha256` (hex) identifies them. */
export type AttachmentUploaded = DomainEvent<
  'AttachmentUploaded',
  { id: string; size: number; sha256: string; blob_key: string; uploaded_at: string }
>;

/** Removed through the files API; its links stop working and its bytes are deleted. */
export type AttachmentDeleted = DomainEvent<'AttachmentDeleted', { id: string; deleted_at: string }>;

/**
 * The bytes under `blob_key` were removed from the blob store: the attachment was deleted, or
 * its room or (files API uploads) its uploader was. The last event of an attachment, recorded
 * with an empty `blob_key` for one gone before its bytes were uploaded.
 */
export type AttachmentBlobRemoved = DomainEvent<'AttachmentBlobRemoved', { id: string; blob_key: string; removed_at: string }>;

export type AttachmentEvent = AttachmentCreated | AttachmentUploaded | AttachmentDeleted | AttachmentBlobRemoved;
