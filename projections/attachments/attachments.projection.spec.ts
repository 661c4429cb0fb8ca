import type { AttachmentCreated } from '../../src/modules/attachments/domain/attachment.events';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { AttachmentDocument, attachmentsProjection } from './attachments.projection';

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
const sent = (instance: string, room: string, messageId: number, attachmentIds: string[], stream = `messages-${instance}.${room}`) =>
  recorded(stream, 'MessageSent', {
    id: messageId,
    user_id: 'ann',
    parts: [{ type: 'text/plain', content: 'hi' }, ...attachmentIds.map((id) => ({ type: 'application/json', attachment: { id } }))],
    room_created_at: at(0),
    created_at: at(2),
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
        message_id: null,
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

  const ended = (instance: string, id: string, blobKey = '') =>
    recorded(`attachment-${instance}.${id}`, 'AttachmentBlobRemoved', { id, blob_key: blobKey, removed_at: at(5) });
  const live = (docs: Map<string, { [k: string]: unknown }>) => ids(new Map([...docs].filter(([, d]) => !d.deleted)));

  it('removes a deleted file, announced and never uploaded, once its end is recorded (a tombstone without its names until then)', async () => {
    const events = [
      created('acme', 'f1', 'r1', { file_name: 'a.txt', custom_data: { k: 1 } }),
      created('acme', 'f2', 'r1', { file_name: 'b.txt' }),
      recorded('attachment-acme.f1', 'AttachmentDeleted', { id: 'f1', deleted_at: at(3) }),
    ];
    const docs = await project(attachmentsProjection, events);
    expect(live(docs)).toEqual(['acme/f2']);
    const tombstone = [...docs.values()].find((d) => (d as AttachmentDocument).id === 'f1')!;
    expect(tombstone).toMatchObject({ deleted: true, deleted_at: at(3), name: '' });
    expect(tombstone).not.toHaveProperty('file_name');
    expect(tombstone).not.toHaveProperty('custom_data');
    expect(tombstone).not.toHaveProperty('blob_key');
    expect(ids(await project(attachmentsProjection, [...events, ended('acme', 'f1')]))).toEqual(['acme/f2']);
  });

  it("removes a deleted room's attachments, in that instance only, and keeps them gone on a late upload (whose bytes the janitor then removes)", async () => {
    const docs = await project(attachmentsProjection, [
      created('acme', 'a1', 'r1'),
      created('acme', 'a2', 'r2'),
      created('other', 'a3', 'r1'),
      recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(3) }),
      uploaded('acme', 'a1'),
    ]);
    expect(live(docs)).toEqual(['acme/a2', 'other/a3']);
    expect([...docs.values()].find((d) => (d as AttachmentDocument).id === 'a1')).toMatchObject({ deleted: true, blob_key: 'acme/a1/u1' });
  });

  it('keeps a tombstone of a gone upload until its blob is removed: deleted, its room deleted, or its uploader deleted (files API uploads, and attachments no message carries)', async () => {
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
      sent('acme', 'r3', 7, ['a4']),
      created('acme', 'a5', 'r3'),
      uploaded('acme', 'a5'),
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
      // An uploader's attachment no message carries goes with the uploader.
      ['a5', at(4), 'acme/a5/u1'],
    ]);
    // A user's v6 attachments stay with the messages they are part of (the messages stay).
    expect([...docs.values()].find((d) => d.id === 'a4')).toMatchObject({ deleted: false, message_id: 7 });
    // Gone again (a room deleted after the file) keeps the first time.
    const again = await project(attachmentsProjection, [...events, recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(6) })]);
    expect([...again.values()].find((d) => d.id === 'f1')).toMatchObject({ deleted_at: at(3) });
    const cleaned = await project(attachmentsProjection, [...events, removed('f1'), removed('a2'), removed('f3'), removed('a5')]);
    expect(ids(cleaned)).toEqual(['acme/a4']);
  });

  it('goes with the message that first carried it: deleted (v2 tombstone or v6), or edited without it', async () => {
    const events = [
      ...['a1', 'a2', 'a3', 'a4', 'a5'].flatMap((id) => [created('acme', id, 'r1'), uploaded('acme', id)]),
      created('other', 'a1', 'r1'),
      uploaded('other', 'a1'),
      sent('acme', 'r1', 1, ['a1']),
      sent('acme', 'r1', 2, ['a2', 'a3']),
      sent('acme', 'r1', 3, ['a4']),
      // Carried again by a later message: still the first one's.
      sent('acme', 'r1', 4, ['a1']),
      sent('other', 'r1', 1, ['a1']),
      recorded('message-acme.1', 'MessageDeleted', { id: 1, room_id: 'r1', tombstone: true, deleted_at: at(5) }),
      // Edited: keeps a2, drops a3, takes a5 on.
      recorded('message-acme.2', 'MessageEdited', {
        id: 2,
        room_id: 'r1',
        parts: [{ type: 'application/json', attachment: { id: 'a2' } }, { type: 'application/json', attachment: { id: 'a5' } }],
        updated_at: at(6),
      }),
      // An older log: the deletion in the room's timeline, without room_id.
      recorded('messages-acme.r1', 'MessageDeleted', { id: 3, tombstone: false, deleted_at: at(7) }),
    ];
    const docs = [...(await project(attachmentsProjection, events)).values()];
    const state = (instance: string, id: string) => {
      const doc = docs.find((d) => d.instance_id === instance && d.id === id)!;
      return [doc.deleted, doc.deleted_at, doc.message_id];
    };
    expect(state('acme', 'a1')).toEqual([true, at(5), 1]);
    expect(state('acme', 'a2')).toEqual([false, undefined, 2]);
    expect(state('acme', 'a3')).toEqual([true, at(6), 2]);
    expect(state('acme', 'a4')).toEqual([true, at(7), 3]);
    expect(state('acme', 'a5')).toEqual([false, undefined, 2]);
    expect(state('other', 'a1')).toEqual([false, undefined, 1]);

    // Deleting the message that took it on later takes it too.
    const later = await project(attachmentsProjection, [
      ...events,
      recorded('message-acme.2', 'MessageDeleted', { id: 2, room_id: 'r1', tombstone: false, deleted_at: at(8) }),
    ]);
    expect([...later.values()].filter((d) => d.instance_id === 'acme' && !d.deleted).map((d) => d.id)).toEqual([]);
  });

  it('keeps, when its uploader is deleted, an attachment folded before messages were recorded on it (a message may carry it)', async () => {
    const [folded] = (await project(attachmentsProjection, [created('acme', 'a1', 'r1'), uploaded('acme', 'a1')])).values() as Iterable<AttachmentDocument>;
    const { message_id: _unknown, ...earlier } = folded;
    const userDeleted = recorded('user-acme.ann', 'UserDeleted', { deleted_at: at(4) });
    const target = { collection: 'attachments', id: folded._id };
    expect(attachmentsProjection.evolve(earlier, userDeleted, target)).toBe(earlier);
    expect(attachmentsProjection.evolve(folded, userDeleted, target)).toMatchObject({ deleted: true, deleted_at: at(4) });
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
