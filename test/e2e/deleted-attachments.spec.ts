import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { rawRequest } from '../support/raw-request';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

/**
 * A v6 attachment goes with what it belongs to: its message (deleted through v6 or v2, or
 * edited without it), its room (deleted at once or by the scheduler), its uploader while no
 * message carries it, the instance wipe. Its links (the download link handed out, and the
 * refresh route a client asks for a new one) answer 404 as soon as the delete is answered;
 * its bytes leave `blobs/` and its name the read models' files.
 */
describe('deleted attachments leave every surface', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const scheduler = (path: string) => `/services/chatkit_scheduler/v1/${s.instanceId}${path}`;
  const raw = (method: string, url: string, body?: Buffer, headers: Record<string, string> = {}) => rawRequest(s.baseUrl, method, url, body, headers);
  const readModelFiles = () => ['', '-wal', '-shm'].map((suffix) => join(s.dataDir, `read-models.sqlite${suffix}`));
  const scan = (markers: readonly string[]) => scanForMarkers({ folders: [join(s.dataDir, 'blobs')], files: readModelFiles() }, markers);

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    for (const id of ['r1', 'doomed']) {
      expect((await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['ben', 'cat'] }, token: as('ann') })).status).toBe(201);
    }
  });
  afterAll(() => s.close());

  interface Uploaded {
    readonly id: string;
    /** In the bytes and in the attachment's name. */
    readonly markers: readonly string[];
  }

  /** Announces and uploads an attachment whose bytes and name carry markers of their own. */
  const upload = async (room: string, user = 'ann'): Promise<Uploaded> => {
    const markers = [marker('attachment-bytes'), marker('attachment-name')];
    const bytes = Buffer.from(JSON.stringify({ secret: markers[0] }));
    const created = await s.request('POST', s.chat(`/rooms/${room}/attachments`), {
      body: { content_type: 'application/json', content_length: bytes.length, name: `${markers[1]}.json` },
      token: as(user),
    });
    expect(created.status).toBe(201);
    expect((await raw('PUT', created.body.upload_url, bytes, { 'content-type': 'application/json' })).status).toBe(204);
    return { id: created.body.attachment_id, markers };
  };

  /** Sends a message carrying the attachments; answers its id and the links a reader was handed. */
  const send = async (room: string, attachments: readonly Uploaded[], user = 'ann') => {
    const parts = [{ type: 'text/plain', content: 'see attached' }, ...attachments.map((a) => ({ type: 'application/json', attachment: { id: a.id } }))];
    const sent = await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts }, token: as(user) });
    expect(sent.status).toBe(201);
    const got = await s.request('GET', s.chat(`/rooms/${room}/messages/${sent.body.message_id}`), { token: as('ben') });
    const links = (got.body.parts as { attachment?: { id: string; download_url: string; refresh_url: string } }[])
      .flatMap((p) => (p.attachment ? [p.attachment] : []))
      .map(({ download_url, refresh_url }) => ({ download: download_url, refresh: refresh_url }));
    return { messageId: sent.body.message_id as number, links };
  };

  const served = async (link: { download: string; refresh: string }) => {
    const refreshed = await s.request('GET', new URL(link.refresh).pathname);
    return { download: (await raw('GET', link.download)).status, refresh: refreshed.status };
  };

  /** Gone: every link 404 at once; the bytes and the name off the disk shortly after (the blob janitor's sweep). */
  const expectGone = async (attachments: readonly Uploaded[], links: readonly { download: string; refresh: string }[]) => {
    for (const link of links) expect(await served(link)).toEqual({ download: 404, refresh: 404 });
    const markers = attachments.flatMap((a) => a.markers);
    await eventually(() => scan(markers).length === 0, { what: `deleted attachments still on disk: ${JSON.stringify(scan(markers))}`, everyMs: 100 });
  };

  /** Still there: links serve, the bytes are in `blobs/`. */
  const expectKept = async (attachment: Uploaded, link: { download: string; refresh: string }) => {
    expect(await served(link)).toEqual({ download: 200, refresh: 200 });
    expect(scan([attachment.markers[0]]).map((f) => f.place)).toEqual([expect.stringContaining('(in ')]);
  };

  it('a message deleted through v6', async () => {
    const attachment = await upload('r1');
    const { messageId, links } = await send('r1', [attachment]);
    expect(scan(attachment.markers).length).toBeGreaterThan(0);
    expect((await s.request('DELETE', s.chat(`/rooms/r1/messages/${messageId}`))).status).toBe(204);
    await expectGone([attachment], links);
  });

  it('a message deleted through v2 (its tombstone stays)', async () => {
    const attachments = [await upload('r1'), await upload('r1')];
    const { messageId, links } = await send('r1', attachments);
    expect((await s.request('DELETE', s.chat(`/messages/${messageId}`, 'v2'))).status).toBe(204);
    await expectGone(attachments, links);
  });

  it('a message edited without it; what the edit keeps stays', async () => {
    const [dropped, kept] = [await upload('r1'), await upload('r1')];
    const { messageId, links } = await send('r1', [dropped, kept]);
    const edit = await s.request('PUT', s.chat(`/rooms/r1/messages/${messageId}`), {
      body: { parts: [{ type: 'text/plain', content: 'only one now' }, { type: 'application/json', attachment: { id: kept.id } }] },
      token: as('ann'),
    });
    expect(edit.status).toBe(204);
    await expectGone([dropped], [links[0]]);
    await expectKept(kept, links[1]);
  });

  it('its uploader deleted while no message carries it; one a message carries stays with the message', async () => {
    const unsent = await upload('r1', 'cat');
    const carried = await upload('r1', 'cat');
    const { links } = await send('r1', [carried], 'cat');
    const unsentLink = await s.request('GET', s.chat(`/rooms/r1/attachments/${unsent.id}`), { token: as('ben') });
    expect(unsentLink.status).toBe(200);
    expect((await s.request('DELETE', s.chat('/users/cat'))).status).toBe(204);
    await expectGone([unsent], [{ download: unsentLink.body.download_url, refresh: s.baseUrl + s.chat(`/rooms/r1/attachments/${unsent.id}`) }]);
    await expectKept(carried, links[0]);
  });

  it('its room deleted by the scheduler (asynchronous delete), with the room’s name', async () => {
    const roomName = marker('scheduled-room-name');
    expect((await s.request('PUT', s.chat('/rooms/doomed'), { body: { name: roomName } })).status).toBe(204);
    const attachment = await upload('doomed');
    const { links } = await send('doomed', [attachment]);
    const job = await s.request('PUT', scheduler('/rooms/doomed'));
    expect(job.status).toBe(200);
    await eventually(async () => (await s.request('GET', scheduler(`/status/${job.body.id}`))).body?.status === 'completed', { what: 'the delete job completed' });
    await expectGone([{ id: attachment.id, markers: [...attachment.markers, roomName] }], links);
  });

  it('a files API upload deleted (v2 data attachments), with its file name', async () => {
    const [bytes, fileName] = [marker('file-bytes'), marker('file-name')];
    const boundary = 'b0undary';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/plain\r\n\r\n${bytes}\r\n--${boundary}--\r\n`,
    );
    const files = `/services/chatkit_files/v1/${s.instanceId}/rooms/r1`;
    const uploaded = await raw('POST', `${files}/users/ann/files/${fileName}`, form, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Bearer ${as('ann')}`,
    });
    expect(uploaded.status).toBe(200);
    const link = (await s.request('GET', `${files}/files/${fileName}`, { token: as('ben') })).body.resource_link as string;
    expect((await raw('GET', link)).status).toBe(200);
    expect(scan([bytes, fileName]).length).toBeGreaterThan(0);
    expect((await s.request('DELETE', `${files}/files/${fileName}`, { token: as('ann') })).status).toBe(204);
    expect((await raw('GET', link)).status).toBe(404);
    await eventually(() => scan([bytes, fileName]).length === 0, { what: `the deleted file still on disk: ${JSON.stringify(scan([bytes, fileName]))}`, everyMs: 100 });
  });

  it('the instance wipe', async () => {
    const attachment = await upload('r1');
    const { links } = await send('r1', [attachment]);
    expect((await s.request('DELETE', s.chat('/resources'))).status).toBe(204);
    // The refresh route answers 404 too once the room is gone with the instance's data.
    await expectGone([attachment], links);
  });
});
