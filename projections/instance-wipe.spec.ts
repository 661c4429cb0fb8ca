import { ALL_PROJECTIONS } from './index';
import { ATTACHMENTS } from './attachments/attachments.projection';
import { project } from '../test/support/projection-fold';
import { recorded } from './testing';

const at = '2026-01-01T00:00:00.000Z';
const byName = (name: string) => ALL_PROJECTIONS.find((p) => p.name === name)!;

describe('projections on an instance wipe', () => {
  it('drop the wiped instance documents only, and build afresh from later events', async () => {
    const users = byName('users');
    const docs = await project(users, [
      recorded('user-acme.a', 'UserCreated', { id: 'a', name: 'old', created_at: at }),
      recorded('user-other.a', 'UserCreated', { id: 'a', name: 'other', created_at: at }),
      recorded('wipes-acme.log', 'InstanceWiped', { wiped_at: at }),
      recorded('user-acme.a', 'UserCreated', { id: 'a', name: 'new', created_at: at }),
    ]);
    expect([...docs.values()].map((d) => [d.instance_id, d.name]).sort()).toEqual([
      ['acme', 'new'],
      ['other', 'other'],
    ]);
  });

  it('leave every attachment as a tombstone: the blob janitor removes a stored one\'s bytes, and records the end of each (which shreds its name)', async () => {
    const docs = await project(byName('attachments'), [
      recorded('attachment-acme.f1', 'AttachmentCreated', { id: 'f1', room_id: 'r', room_created_at: at, user_id: 'u', content_type: 'text/plain', content_length: 1, name: 'f', created_at: at }),
      recorded('attachment-acme.f1', 'AttachmentUploaded', { id: 'f1', size: 1, sha256: 'x', blob_key: 'k', uploaded_at: at }),
      recorded('attachment-acme.f2', 'AttachmentCreated', { id: 'f2', room_id: 'r', room_created_at: at, user_id: 'u', content_type: 'text/plain', content_length: 1, name: 'g', created_at: at }),
      recorded('wipes-acme.log', 'InstanceWiped', { wiped_at: at }),
    ]);
    expect([...docs.entries()].map(([k, d]) => [k.startsWith(`${ATTACHMENTS}|`), d.id, d.deleted, d.name])).toEqual([
      [true, 'f1', true, ''],
      [true, 'f2', true, ''],
    ]);
  });
});
