import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { ATTACHMENTS, AttachmentDocument, attachmentDocumentId } from '../../../projections/attachments/attachments.projection';

/** Reads of the attachments read model. Tombstones (gone, bytes not yet removed) show only to the blob janitor. */
@Injectable()
export class AttachmentsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async get(instanceId: string, attachmentId: string): Promise<AttachmentDocument | null> {
    const doc = await this.readModels.get<AttachmentDocument>(ATTACHMENTS, attachmentDocumentId(instanceId, attachmentId));
    return doc && !doc.deleted ? doc : null;
  }

  /** An uploaded attachment of this room, or null. */
  async uploadedIn(instanceId: string, roomId: string, attachmentId: string): Promise<AttachmentDocument | null> {
    const doc = await this.get(instanceId, attachmentId);
    return doc && doc.room_id === roomId && doc.uploaded ? doc : null;
  }

  /** Every upload stored under a file name in a room, newest first (the first is the current file). */
  filesNamed(instanceId: string, roomId: string, fileName: string): Promise<AttachmentDocument[]> {
    return this.readModels.find<AttachmentDocument>(ATTACHMENTS, {
      where: { instance_id: instanceId, room_id: roomId, file_name: fileName, uploaded: true, deleted: false },
      sort: [{ field: 'created_at', descending: true }],
    });
  }

  /** Every files API upload of a user in the instance. */
  filesOf(instanceId: string, userId: string): Promise<AttachmentDocument[]> {
    return this.readModels.find<AttachmentDocument>(ATTACHMENTS, {
      where: { instance_id: instanceId, user_id: userId, origin: 'files', deleted: false },
    });
  }

  /** The blob key an attachment's upload recorded, tombstones included (they still own their bytes); null if none. */
  async blobKeyOf(instanceId: string, attachmentId: string): Promise<string | null> {
    const doc = await this.readModels.get<AttachmentDocument>(ATTACHMENTS, attachmentDocumentId(instanceId, attachmentId));
    return doc?.blob_key ?? null;
  }

  /** Gone attachments whose end is not recorded yet (bytes still stored, or none uploaded), in every instance: the blob janitor's work list. */
  tombstones(limit: number): Promise<AttachmentDocument[]> {
    return this.readModels.find<AttachmentDocument>(ATTACHMENTS, { where: { deleted: true }, limit });
  }

  /** The gone attachments a message carried first (its delete, or an edit without them, took them), whose end is not recorded yet. */
  tombstonesCarriedBy(instanceId: string, messageId: number): Promise<AttachmentDocument[]> {
    return this.readModels.find<AttachmentDocument>(ATTACHMENTS, { where: { instance_id: instanceId, message_id: messageId, deleted: true } });
  }
}
