import { dataKeyIds, DataKeyOf, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { AttachmentBlobRemoved, AttachmentCreated, AttachmentDeleted } from './attachment.events';

const attachmentKey = (stream: string, attachmentId: string): DataKeyOf | null => {
  const parsed = parseStreamName(stream);
  return parsed ? { id: dataKeyIds.attachment(parsed.instanceId, attachmentId), owner: null } : null;
};

/**
 * What its uploader wrote about an attachment (its name, custom data and, for a files API
 * upload, its file name) under a key of the attachment's own. Erased (it is gone) it reads
 * with an empty name.
 */
export const attachmentCreatedPersonalData: PersonalDataRule<AttachmentCreated> = {
  type: 'AttachmentCreated',
  fields: ['name', 'custom_data', 'file_name'],
  erased: { name: '' },
  keyOf: (event, stream) => attachmentKey(stream, event.data.id),
};

const destroysTheAttachment = (stream: string, attachmentId: string) => {
  const key = attachmentKey(stream, attachmentId);
  return key ? [{ ids: [key.id] }] : [];
};

/** A deleted file, or an attachment that went with the message that carried it. */
export const attachmentDeletedShreds: ShredRule<AttachmentDeleted> = {
  type: 'AttachmentDeleted',
  destroys: (event, stream) => destroysTheAttachment(stream, event.data.id),
};

/**
 * The last event of every attachment that is gone, however it went (its own delete, its
 * message's, its room's, its uploader's, the wipe): recorded by the blob janitor once the
 * bytes are removed.
 */
export const attachmentBlobRemovedShreds: ShredRule<AttachmentBlobRemoved> = {
  type: 'AttachmentBlobRemoved',
  destroys: (event, stream) => destroysTheAttachment(stream, event.data.id),
};
