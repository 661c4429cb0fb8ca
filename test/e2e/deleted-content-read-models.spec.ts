import jwt from 'jsonwebtoken';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

/**
 * What an operator finds in `read-models.sqlite` and its WAL after deletes: none of the
 * deleted content (freed pages overwritten, older page images gone with the WAL), while the
 * server runs and after it stops; what was not deleted is still there.
 */
describe('deleted content leaves the read models’ files', () => {
  let dataDir: string;
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const readModelFiles = () => ['', '-wal', '-shm'].map((suffix) => join(dataDir, `read-models.sqlite${suffix}`));
  const found = (markers: readonly string[]) => scanForMarkers({ files: readModelFiles() }, markers);
  const markersIn = (markers: readonly string[]) => new Set(found(markers).map((f) => f.marker));
  /** A feed's items, deleted by the second test. */
  const feedItems = [marker('feed-item'), marker('feed-item')];

  const m = {
    v6Text: marker('v6-deleted-text'),
    v2Text: marker('v2-deleted-text'),
    editedAway: marker('text-before-edit'),
    userName: marker('deleted-user-name'),
    userAvatar: marker('deleted-user-avatar'),
    userCustom: marker('deleted-user-custom-data'),
    scheduledUserName: marker('user-deleted-by-the-scheduler'),
    roomName: marker('deleted-room-name'),
    roomCustom: marker('deleted-room-custom-data'),
    roomMessage: marker('deleted-room-message'),
  };
  const kept = { text: marker('kept-text'), edited: marker('text-after-edit'), userName: marker('kept-user-name') };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-shred-rm-'));
    s = await startTestServer({ dataDir });
    const users = [
      { id: 'ann', name: kept.userName },
      { id: 'ben', name: m.userName, avatar_url: `https://x.test/${m.userAvatar}.png`, custom_data: { note: m.userCustom } },
      { id: 'cal', name: m.scheduledUserName },
    ];
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    const create = (id: string, name: string, customData?: unknown) =>
      s.request('POST', s.chat('/rooms'), { body: { id, name, user_ids: ['ben'], ...(customData !== undefined && { custom_data: customData }) }, token: as('ann') });
    expect((await create('kept', 'kept room')).status).toBe(201);
    expect((await create('gone', m.roomName, { note: m.roomCustom })).status).toBe(201);
    // Enough traffic that the deleted rows share pages with rows that stay.
    for (let i = 0; i < 30; i++) {
      await s.request('POST', s.chat('/rooms/kept/messages'), { body: { parts: [{ type: 'text/plain', content: `filler ${i}` }] }, token: as('ann') });
    }
  });

  afterAll(async () => {
    await s?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps none of a v6 and a v2 deleted message, an edited message’s earlier text, a deleted user (at once or by the scheduler) or a deleted room', async () => {
    const send = async (room: string, text: string, version: 'v2' | 'v6' = 'v6', user = 'ann') => {
      const body = version === 'v6' ? { parts: [{ type: 'text/plain', content: text }] } : { text };
      const sent = await s.request('POST', s.chat(`/rooms/${room}/messages`, version), { body, token: as(user) });
      expect(sent.status).toBe(201);
      return sent.body.message_id as number;
    };
    const v6 = await send('kept', m.v6Text);
    const v2 = await send('kept', m.v2Text, 'v2');
    const edited = await send('kept', m.editedAway);
    await send('kept', kept.text);
    await send('gone', m.roomMessage, 'v6', 'ben');
    // Everything is in the read models before the deletes: the scan sees what it should.
    await eventually(() => markersIn(Object.values(m)).size === Object.values(m).length, { what: 'every marker in the read models' });

    expect((await s.request('DELETE', s.chat(`/rooms/kept/messages/${v6}`))).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/messages/${v2}`, 'v2'))).status).toBe(204);
    const edit = await s.request('PUT', s.chat(`/rooms/kept/messages/${edited}`), {
      body: { parts: [{ type: 'text/plain', content: kept.edited }] },
      token: as('ann'),
    });
    expect(edit.status).toBe(204);
    expect((await s.request('DELETE', s.chat('/users/ben'))).status).toBe(204);
    expect((await s.request('DELETE', s.chat('/rooms/gone'))).status).toBe(204);
    // The scheduler's asynchronous delete.
    const job = await s.request('PUT', `/services/chatkit_scheduler/v1/${s.instanceId}/users/cal`);
    expect(job.status).toBe(200);
    await eventually(async () => (await s.request('GET', `/services/chatkit_scheduler/v1/${s.instanceId}/status/${job.body.id}`)).body?.status === 'completed', {
      what: 'the scheduled delete completed',
    });

    // While the server runs: the files as they are on disk now, WAL included.
    await eventually(() => found(Object.values(m)).length === 0, {
      what: `deleted content still in the read models: ${JSON.stringify(found(Object.values(m)))}`,
    });
    // Nothing that was not deleted is lost.
    expect(markersIn(Object.values(kept))).toEqual(new Set(Object.values(kept)));

  });

  it('keeps none of a feed’s deleted items', async () => {
    const now = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign(
      { app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: now - 60, exp: now + 3600, feeds: { permission: { path: '*', action: '*' } } },
      s.secret,
    );
    const feed = `/services/feeds/v1/${s.instanceId}/feeds/notes/items`;
    expect((await s.request('POST', feed, { body: { items: feedItems.map((text) => ({ text })) }, token: feedsToken })).status).toBe(200);
    await eventually(() => markersIn(feedItems).size === feedItems.length, { what: 'the items in the read models' });
    expect((await s.request('DELETE', feed, { token: feedsToken })).status).toBe(200);
    await eventually(() => found(feedItems).length === 0, { what: `deleted items still in the read models: ${JSON.stringify(found(feedItems))}` });
  });

  it('keeps none of it after a clean stop; what was not deleted is there', async () => {
    await s.close();
    expect(found([...Object.values(m), ...feedItems])).toEqual([]);
    expect(markersIn(Object.values(kept))).toEqual(new Set(Object.values(kept)));
  });
});
