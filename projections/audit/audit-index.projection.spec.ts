import type { Actor, RecordedEvent } from '../../src/shared/domain/event';
import type { ParleyEvent } from '../events';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { AUDIT_INDEX, auditIndexProjection, auditKeys } from './audit-index.projection';

const by = <E extends RecordedEvent<ParleyEvent>>(event: E, actor: Actor): E => ({ ...event, metadata: { ...event.metadata, actor } });
const at = '2026-01-01T00:00:00.000Z';
const text = [{ type: 'text/plain', content: 'hi' }];

describe('audit index projection', () => {
  const sent = by(recorded('messages-acme.lobby', 'MessageSent', { id: 7, user_id: 'ann', parts: text, room_created_at: at, created_at: at }), { user_id: 'ann', key_id: 'k1' });
  const grant = by(recorded('userroles-acme.bob', 'UserRoleAssigned', { user_id: 'bob', role_name: 'mod', role_id: 'mod-1', room_id: 'lobby' }), { key_id: 'k1', su: true });
  const attachment = by(recorded('attachment-acme.a1', 'AttachmentCreated', {
      id: 'a1',
      room_id: 'lobby',
      room_created_at: at,
      user_id: 'ann',
      content_type: 'text/plain',
      content_length: 1,
      name: 'a.txt',
      created_at: at,
    }), { user_id: 'ann', key_id: 'k1' });
  const system = recorded('attachment-acme.a1', 'AttachmentBlobRemoved', { id: 'a1', blob_key: 'acme/a1', removed_at: at });

  it('indexes an event under who acted and, for attachments, room role grants and message edits and deletions, under the room', () => {
    expect(auditKeys(sent)).toEqual(['user:ann', 'key:k1']);
    const edited = by(recorded('message-acme.7', 'MessageEdited', { id: 7, room_id: 'lobby', parts: text, updated_at: at }), { user_id: 'ann', key_id: 'k1' });
    expect(auditKeys(edited)).toEqual(['user:ann', 'key:k1', 'room:lobby']);
    // An older log's edit in the timeline names no room: the room's view reads the timeline itself.
    expect(auditKeys(by(recorded('messages-acme.lobby', 'MessageEdited', { id: 7, parts: text, updated_at: at }), { user_id: 'ann' }))).toEqual(['user:ann']);
    expect(auditKeys(grant)).toEqual(['key:k1', 'room:lobby']);
    expect(auditKeys(attachment)).toEqual(['user:ann', 'key:k1', 'room:lobby']);
    expect(auditKeys(system)).toEqual([]);
  });

  it('records where each event is (instance, key, position, stream, revision, type), and nothing of its data', async () => {
    const docs = [...(await project(auditIndexProjection, [sent, grant, attachment, system])).entries()];
    expect(docs).toHaveLength(7);
    const ofRoom = docs.filter(([, d]) => d.key === 'room:lobby').map(([k, d]) => [k.split('|')[0], d]);
    expect(ofRoom).toEqual([
      [AUDIT_INDEX, { _id: expect.any(String), instance_id: 'acme', key: 'room:lobby', position: grant.position, stream: 'userroles-acme.bob', revision: 0, type: 'UserRoleAssigned' }],
      [AUDIT_INDEX, { _id: expect.any(String), instance_id: 'acme', key: 'room:lobby', position: attachment.position, stream: 'attachment-acme.a1', revision: 0, type: 'AttachmentCreated' }],
    ]);
  });

  it('names each line by its instance, its key and its event’s position', async () => {
    const docs = await project(auditIndexProjection, [attachment]);
    expect([...docs.values()].map((d) => [JSON.parse(d._id), d.key])).toEqual([
      [['acme', 'user:ann', attachment.position], 'user:ann'],
      [['acme', 'key:k1', attachment.position], 'key:k1'],
      [['acme', 'room:lobby', attachment.position], 'room:lobby'],
    ]);
  });

  it('gives a replayed event the same document (at-least-once delivery)', async () => {
    const once = await project(auditIndexProjection, [sent, grant]);
    const twice = await project(auditIndexProjection, [sent, grant, sent, grant]);
    expect([...twice.entries()]).toEqual([...once.entries()]);
  });

  it('handles every event type Parley appends', () => {
    for (const type of ['MessageSent', 'UserCreated', 'KeyCreated', 'BeamsPublishAccepted', 'FeedItemsPublished', 'InstanceWiped', 'ReadCursorSet']) {
      expect(auditIndexProjection.handles).toContain(type);
    }
  });
});
