import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { AttachmentCommand, attachmentDecider, attachmentStream, MAX_ATTACHMENT_BYTES } from './attachment.decider';
import { AttachmentEvent } from './attachment.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const roomBorn = '2025-12-01T00:00:00.000Z';
const given = deciderSpecification(attachmentDecider);

const create: AttachmentCommand = {
  type: 'CreateAttachment',
  id: 'a1',
  roomId: 'r1',
  roomCreatedAt: roomBorn,
  userId: 'ann',
  contentType: 'application/json',
  contentLength: 12,
  name: 'data.json',
  customData: { k: 1 },
  now,
};
const created: AttachmentEvent = {
  type: 'AttachmentCreated',
  data: {
    id: 'a1',
    room_id: 'r1',
    room_created_at: roomBorn,
    user_id: 'ann',
    content_type: 'application/json',
    content_length: 12,
    name: 'data.json',
    custom_data: { k: 1 },
    created_at: now,
  },
};
const upload = (sha256 = 'aa', size = 12): AttachmentCommand => ({
  type: 'RecordUpload',
  id: 'a1',
  size,
  sha256,
  blobKey: `acme/a1/${sha256}`,
  now: later,
});
const uploaded = (sha256 = 'aa', size = 12): AttachmentEvent => ({
  type: 'AttachmentUploaded',
  data: { id: 'a1', size, sha256, blob_key: `acme/a1/${sha256}`, uploaded_at: later },
});
const deleted: AttachmentEvent = { type: 'AttachmentDeleted', data: { id: 'a1', deleted_at: later } };

describe('attachment decider', () => {
  it('names one stream per attachment', () => {
    expect(attachmentStream('acme', 'a1')).toBe('attachment-acme.a1');
  });

  it('announces an attachment, custom_data only when given', () => {
    given().when(create).then([created]);
    const [plain] = given().when({ ...create, customData: undefined }).then([expect.objectContaining({ type: 'AttachmentCreated' })]);
    expect(plain.data).not.toHaveProperty('custom_data');
    expect(plain.data).not.toHaveProperty('file_name');
  });

  it('refuses more than 5 MiB (413) and lengths that are not whole bytes', () => {
    given().when({ ...create, contentLength: MAX_ATTACHMENT_BYTES }).then([expect.objectContaining({ type: 'AttachmentCreated' })]);
    given()
      .when({ ...create, contentLength: MAX_ATTACHMENT_BYTES + 1 })
      .thenThrows({ code: 'payload_too_large/attachment_too_large', status: 413 });
    given().when({ ...create, contentLength: -1 }).thenThrows(DomainError, { status: 400 });
    given().when({ ...create, contentLength: 1.5 }).thenThrows(DomainError, { status: 400 });
  });

  it('refuses announcing the same id twice', () => {
    given(created).when(create).thenThrows({ code: 'conflict/attachment_exists' });
  });

  it('records an upload of exactly the announced length', () => {
    given(created).when(upload()).then([uploaded()]);
    given(created).when(upload('aa', 11)).thenThrows({ code: 'bad_request/wrong_content_length', status: 400 });
  });

  it('takes the same bytes again as a no-op, and refuses other bytes once uploaded', () => {
    given(created, uploaded()).when(upload()).thenNothingHappened();
    given(created, uploaded()).when(upload('bb')).thenThrows({ code: 'conflict/already_uploaded' });
  });

  it('knows no upload for an attachment never announced or deleted', () => {
    given().when(upload()).thenThrows({ code: 'not_found/attachment_not_found' });
    given(created, deleted).when(upload()).thenThrows({ code: 'not_found/attachment_not_found' });
  });

  it('stores a files API upload as announced and uploaded at once, under its file name', () => {
    const events = given()
      .when({
        type: 'StoreFile',
        id: 'f1',
        roomId: 'r1',
        roomCreatedAt: roomBorn,
        userId: 'ann',
        contentType: 'image/png',
        name: 'cat.png',
        fileName: 'cat.png',
        size: 3,
        sha256: 'cc',
        blobKey: 'acme/f1/x',
        now,
      })
      .then([
        {
          type: 'AttachmentCreated',
          data: {
            id: 'f1',
            room_id: 'r1',
            room_created_at: roomBorn,
            user_id: 'ann',
            content_type: 'image/png',
            content_length: 3,
            name: 'cat.png',
            file_name: 'cat.png',
            created_at: now,
          },
        },
        { type: 'AttachmentUploaded', data: { id: 'f1', size: 3, sha256: 'cc', blob_key: 'acme/f1/x', uploaded_at: now } },
      ]);
    expect(fold(attachmentDecider, events)).toMatchObject({ exists: true, fileName: 'cat.png', upload: { size: 3 } });
  });

  it('deletes once; deleting again or deleting nothing decides nothing', () => {
    given(created, uploaded()).when({ type: 'DeleteAttachment', id: 'a1', now: later }).then([deleted]);
    given(created, deleted).when({ type: 'DeleteAttachment', id: 'a1', now: later }).thenNothingHappened();
    given().when({ type: 'DeleteAttachment', id: 'a1', now: later }).thenNothingHappened();
  });

  it('records the removal of an upload\'s blob once, and only of the blob it has', () => {
    const removal: AttachmentCommand = { type: 'RecordBlobRemoved', id: 'a1', blobKey: 'acme/a1/aa', now: later };
    const removed: AttachmentEvent = { type: 'AttachmentBlobRemoved', data: { id: 'a1', blob_key: 'acme/a1/aa', removed_at: later } };
    given(created, uploaded()).when(removal).then([removed]);
    given(created, uploaded(), removed).when(removal).thenNothingHappened();
    given(created, uploaded()).when({ ...removal, blobKey: 'acme/a1/other' }).thenNothingHappened();
    given(created).when(removal).thenNothingHappened();
    // Wiped with its instance: the stream reads as empty, and the removal is still recorded.
    given().when(removal).then([removed]);
    expect(fold(attachmentDecider, [created, uploaded(), removed])).toMatchObject({ deleted: true, blobRemoved: true });
    given(created, uploaded(), removed).when(upload()).thenThrows({ code: 'not_found/attachment_not_found' });
  });

  it('records the end of an attachment gone before its upload (no blob), after which no upload is taken', () => {
    const end: AttachmentCommand = { type: 'RecordBlobRemoved', id: 'a1', blobKey: '', now: later };
    const ended: AttachmentEvent = { type: 'AttachmentBlobRemoved', data: { id: 'a1', blob_key: '', removed_at: later } };
    given(created).when(end).then([ended]);
    given(created, ended).when(end).thenNothingHappened();
    // Uploaded meanwhile: its blob is removed first (the next sweep sees its key).
    given(created, uploaded()).when(end).thenNothingHappened();
    given(created, ended)
      .when({ type: 'RecordUpload', id: 'a1', size: 5, sha256: 'x', blobKey: 'acme/a1/aa', now: later })
      .thenThrows(DomainError, /does not exist/);
  });
});
