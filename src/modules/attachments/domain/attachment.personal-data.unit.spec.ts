import { dataKeyIds } from '../../../shared/domain/personal-data';
import { AttachmentCreated } from './attachment.events';
import { attachmentBlobRemovedShreds, attachmentCreatedPersonalData, attachmentDeletedShreds } from './attachment.personal-data';

const created: AttachmentCreated = {
  type: 'AttachmentCreated',
  data: {
    id: 'a1',
    room_id: 'r',
    room_created_at: 't',
    user_id: 'ann',
    content_type: 'text/plain',
    content_length: 3,
    name: 'secret.txt',
    custom_data: { note: 'x' },
    file_name: 'secret.txt',
    created_at: 'c',
  },
};
const STREAM = 'attachment-acme.a1';
const none = { readStream: async () => [] };

describe('attachment personal data', () => {
  it("seals an attachment's name, custom data and file name under a key of its own", () => {
    expect(attachmentCreatedPersonalData.keyOf(created, STREAM)).toEqual({ id: 'acme/attachment/a1', owner: null });
    expect(attachmentCreatedPersonalData.fields).toEqual(['name', 'custom_data', 'file_name']);
  });

  it('destroys that key when the attachment is deleted, and when its bytes are removed (however it went)', async () => {
    const key = dataKeyIds.attachment('acme', 'a1');
    expect(await attachmentDeletedShreds.destroys({ type: 'AttachmentDeleted', data: { id: 'a1', deleted_at: 'd' } }, STREAM, none)).toEqual([{ ids: [key] }]);
    expect(
      await attachmentBlobRemovedShreds.destroys({ type: 'AttachmentBlobRemoved', data: { id: 'a1', blob_key: 'b', removed_at: 'd' } }, STREAM, none),
    ).toEqual([{ ids: [key] }]);
  });
});
