import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { rawRequest } from '../support/raw-request';
import { UpgradeLab } from '../support/upgrade-lab';
import { eventually } from '../support/waiting';

/**
 * An upgrade onto a data directory whose attachments read model was folded before attachments
 * were linked to the messages carrying them (`message_id` absent): this release builds
 * attachments_v3 beside the serving attachments_v2 (serving throughout) and switches to it, so
 * that deleting such an attachment's message, or its uploader, takes it without
 * `npm run rebuild -- attachments`.
 */
const INSTANCE = 'attachments-upgrade';
const KEY = 'upgrade-key:upgrade-secret-3a9f0c21';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
/** The release before (this one without attachments_v3), built from test/support/release-before-attachments-v3.ts. */
const RELEASE_BEFORE = 'dist/test/support/release-before-attachments-v3.js';

const lab = new UpgradeLab(INSTANCE, KEY);
const { call, token, v6, start, baseUrl: base } = lab;

/** An attachment whose bytes carry a marker, uploaded by `user`; answers its id and download link. */
async function attach(user: string): Promise<{ id: string; bytes: string; link: () => Promise<string> }> {
  const bytes = marker('bytes');
  const body = Buffer.from(bytes);
  const created = await call('POST', v6('/rooms/r1/attachments'), { body: { content_type: 'text/plain', content_length: body.length, name: 'note.txt' }, as: token({ sub: user }) });
  expect((await rawRequest(base(), 'PUT', created.upload_url, body, { 'content-type': 'text/plain' })).status).toBe(204);
  const id = created.attachment_id as string;
  return { id, bytes, link: async () => (await call('GET', v6(`/rooms/r1/attachments/${id}`))).download_url as string };
}

/** Which role /health gives a projection version (`serving` when it names none). */
async function roleOf(checkpoint: string): Promise<string | null> {
  const reported = (await (await fetch(`${base()}/health`)).json())?.projections?.[checkpoint];
  return reported ? (reported.role ?? 'serving') : null;
}

const inBlobs = (markers: readonly string[]) => scanForMarkers({ folders: [join(lab.dataDir, 'blobs')] }, markers);

describe('an upgrade to attachments_v3', () => {
  afterAll(() => lab.cleanUp());

  it('links the attachments an earlier release folded without their message: deleting the message, or the uploader, takes them without a rebuild', async () => {
    await start(RELEASE_BEFORE);
    await call('POST', v6('/batch_users'), { body: { users: ['alice', 'bob'].map((id) => ({ id, name: id })) } });
    await call('POST', v6('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['alice', 'bob'] } });
    const carried = await attach('alice');
    const parts = [{ type: 'text/plain', content: 'see attached' }, { type: 'text/plain', attachment: { id: carried.id } }];
    const messageId = (await call('POST', v6('/rooms/r1/messages'), { body: { parts }, as: token({ sub: 'alice' }) })).message_id as number;
    const unsent = await attach('bob');
    await lab.stop();

    // The documents as releases before the link folded them: no message_id.
    const readModels = new Database(join(lab.dataDir, 'read-models.sqlite'));
    expect(readModels.prepare("UPDATE rm_attachments_v2 SET doc = json_remove(doc, '$.message_id')").run().changes).toBe(2);
    readModels.close();

    await start('dist/src/main.js');
    // Built beside the serving version, which serves meanwhile; then reads switch to it.
    await eventually(async () => (await roleOf('attachments_v3')) === 'serving' && (await roleOf('attachments_v2')) === 'retired', {
      what: 'attachments_v3 serving',
      timeoutMs: 60_000,
      everyMs: 100,
    });
    const links = [await carried.link(), await unsent.link()];
    for (const link of links) expect((await rawRequest(base(), 'GET', link)).status).toBe(200);

    await call('DELETE', v6(`/rooms/r1/messages/${messageId}`));
    expect((await rawRequest(base(), 'GET', links[0])).status).toBe(404);
    await call('DELETE', v6('/users/bob'));
    expect((await rawRequest(base(), 'GET', links[1])).status).toBe(404);
    await eventually(() => inBlobs([carried.bytes, unsent.bytes]).length === 0, { what: 'their bytes removed', timeoutMs: 20_000, everyMs: 100 });
  }, 180_000);
});
