import type { AttachmentCreated } from '../../src/modules/attachments/domain/attachment.events';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { attachmentsProjection } from './attachments.projection';

const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
const created = (instance: string, id: string, room: string, extra: Partial<AttachmentCreated['data']> = {}) =>
  recorded(`attachment-${instance}.${id}`, 'AttachmentCreated', {
    id,
    room_id: room,
    room_created_at: at(0),
    user_id: 'ann',
    content_type: 'application/json',
    content_length: 5,
    name: 'data.json',
    created_at: at(1),
    ...extra,
  });
const uploaded = (instance: string, id: string) =>
  recorded(`attachment-${instance}.${id}`, 'AttachmentUploaded', {
    id,
    size: 5,
    sha256: 'ab',
    blob_key: `${instance}/${id}/u1`,
    uploaded_at: at(2),
  });
const ids = (docs: Map<string, { [k: string]: unknown }>) =>
  [...docs.values()].map((d) => `${d.instance_id}/${d.id}`).sort();

describe('attachments projection', () => {
  it('keeps an announced attachment, then its upload', async () => {
    const announced = await project(attachmentsProjection, [created('acme', 'a1', 'r1', { custom_data: { k: 1 } })]);
    expect([...announced.values()]).toEqual([
      {
        _id: JSON.stringify(['acme', 'a1']),
        instance_id: 'acme',
        id: 'a1',
        room_id: 'r1',
        user_id: 'ann',
        content_type: 'application/json',
        content_length: 5,
        name: 'data.json',
        custom_data: { k: 1 },
        origin: 'attachments',
        created_at: at(1),
        uploaded: false,
        deleted: false,
      },
    ]);
    const docs = await project(attachmentsProjection, [created('acme', 'a1', 'r1'), uploaded('acme', 'a1')]);
    expect([...docs.values()][0]).toMatchObject({
      uploaded: true,
      size: 5,
      sha256: 'ab',
      blob_key: 'acme/a1/u1',
      uploaded_at: at(2),
    });
    expect([...docs.values()][0]).not.toHaveProperty('custom_data');
  });

  it('marks files API uploads by origin and file name', async () => {
    const docs = await project(attachmentsProjection, [created('acme', 'f1', 'r1', { file_name: 'cat.png' }), uploaded('acme', 'f1')]);
    expect([...docs.values()][0]).toMatchObject({ origin: 'files', file_name: 'cat.png', uploaded: true });
  });

  it('removes a deleted file', async () => {
    const docs = await project(attachmentsProjection, [
      created('acme', 'f1', 'r1', { file_name: 'a.txt' }),
      created('acme', 'f2', 'r1', { file_name: 'b.txt' }),
      recorded('attachment-acme.f1', 'AttachmentDeleted', { id: 'f1', deleted_at: at(3) }),
    ]);
    expect(ids(docs)).toEqual(['acme/f2']);
  });

  it("removes a deleted room's attachments, in that instance only, and keeps them gone on a late upload", async () => {
    const docs = await project(attachmentsProjection, [
      created('acme', 'a1', 'r1'),
      created('acme', 'a2', 'r2'),
      created('other', 'a3', 'r1'),
      recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(3) }),
      uploaded('acme', 'a1'),
    ]);
    expect(ids(docs)).toEqual(['acme/a2', 'other/a3']);
  });

  it('keeps a tombstone of a gone upload until its blob is removed: deleted, its room deleted, or (files) its uploader deleted', async () => {
    const removed = (id: string) =>
      recorded(`attachment-acme.${id}`, 'AttachmentBlobRemoved', { id, blob_key: `acme/${id}/u1`, removed_at: at(5) });
    const events = [
      created('acme', 'f1', 'r1', { file_name: 'a.txt' }),
      uploaded('acme', 'f1'),
      created('acme', 'a2', 'r2'),
      uploaded('acme', 'a2'),
      created('acme', 'f3', 'r3', { file_name: 'c.txt' }),
      uploaded('acme', 'f3'),
      created('acme', 'a4', 'r3'),
      uploaded('acme', 'a4'),
      recorded('attachment-acme.f1', 'AttachmentDeleted', { id: 'f1', deleted_at: at(3) }),
      recorded('room-acme.r2', 'RoomDeleted', { deleted_at: at(3) }),
      recorded('user-acme.ann', 'UserDeleted', { deleted_at: at(4) }),
    ];
    const docs = await project(attachmentsProjection, events);
    const tombstones = [...docs.values()].filter((d) => d.deleted).map((d) => [d.id, d.deleted_at, d.blob_key]);
    expect(tombstones).toEqual([
      ['f1', at(3), 'acme/f1/u1'],
      ['a2', at(3), 'acme/a2/u1'],
      ['f3', at(4), 'acme/f3/u1'],
    ]);
    // A user's v6 attachments stay with the messages they are part of.
    expect([...docs.values()].find((d) => d.id === 'a4')).toMatchObject({ deleted: false });
    // Gone again (a room deleted after the file) keeps the first time.
    const again = await project(attachmentsProjection, [...events, recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(6) })]);
    expect([...again.values()].find((d) => d.id === 'f1')).toMatchObject({ deleted_at: at(3) });
    const cleaned = await project(attachmentsProjection, [...events, removed('f1'), removed('a2'), removed('f3')]);
    expect(ids(cleaned)).toEqual(['acme/a4']);
  });

  it('ignores events of its types on streams of other categories', async () => {
    const docs = await project(attachmentsProjection, [
      created('acme', 'a1', 'r1'),
      recorded('user-acme.r1', 'RoomDeleted', { deleted_at: at(3) }),
      recorded('room-acme.a1', 'AttachmentDeleted', { id: 'a1', deleted_at: at(3) }),
    ]);
    expect(ids(docs)).toEqual(['acme/a1']);
  });

  it('is idempotent: the same events twice give the same documents', async () => {
    const events = [created('acme', 'a1', 'r1'), uploaded('acme', 'a1')];
    expect(await project(attachmentsProjection, [...events, ...events])).toEqual(await project(attachmentsProjection, events));
  });
});
