import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SecretBox } from '../../src/shared/crypto/secret-box';
import { LinkSigner } from '../../src/shared/crypto/link-signer';
import { startTestServer, TestServer } from '../support/test-server';
import { rawRequest } from '../support/raw-request';

const FIVE_MIB = 5 * 1024 * 1024;

describe('attachments (v6 upload flow) and the files API', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const files = (path: string) => `/services/chatkit_files/v1/${s.instanceId}${path}`;

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['ben'] }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'r2', name: 'r2' }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'hidden', name: 'hidden', private: true }, token: as('ann') });
  });
  afterAll(() => s.close());

  const raw = (method: string, url: string, body?: Buffer, headers: Record<string, string> = {}) =>
    rawRequest(s.baseUrl, method, url, body, headers);

  const announce = (room: string, body: Record<string, unknown>, user = 'ann') =>
    s.request('POST', s.chat(`/rooms/${room}/attachments`), { body, token: as(user) });

  /** Announces and uploads bytes; answers the attachment id. */
  const uploadAttachment = async (room: string, bytes: Buffer, type = 'application/json', extra: Record<string, unknown> = {}) => {
    const created = await announce(room, { content_type: type, content_length: bytes.length, ...extra });
    expect(created.status).toBe(201);
    const put = await raw('PUT', created.body.upload_url, bytes, { 'content-type': type });
    expect(put.status).toBeLessThan(300);
    return created.body.attachment_id as string;
  };

  const signer = () => new LinkSigner(SecretBox.fromFile(join(s.dataDir, 'master.key')).deriveKey('attachment-links'));

  const minutesAhead = (iso: string) => (Date.parse(iso) - Date.now()) / 60_000;

  describe('v6 flow', () => {
    const data = Buffer.from(JSON.stringify({ hello: 'attachments', n: [1, 2, 3] }));
    let attachmentId: string;
    let messageId: number;

    it('announces an attachment and answers a signed upload URL on this server', async () => {
      const created = await announce('r1', {
        content_type: 'application/json',
        content_length: data.length,
        name: 'data.json',
        custom_data: { k: 1 },
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ attachment_id: expect.any(String), upload_url: expect.any(String) });
      const url = new URL(created.body.upload_url);
      expect(`${url.protocol}//${url.host}`).toBe(s.baseUrl);
      expect(url.searchParams.get('sig')).toBeTruthy();
      expect(Number(url.searchParams.get('expires')) * 1000).toBeGreaterThan(Date.now() + 30 * 60_000);
      attachmentId = created.body.attachment_id;

      const put = await raw('PUT', created.body.upload_url, data, { 'content-type': 'application/json' });
      expect(put.status).toBe(204);
    });

    it('sends a v6 message with the attachment; v6 reads show links that serve the exact bytes', async () => {
      const sent = await s.request('POST', s.chat('/rooms/r1/messages'), {
        body: {
          parts: [
            { type: 'text/plain', content: 'see attached' },
            { type: 'application/json', attachment: { id: attachmentId } },
          ],
        },
        token: as('ann'),
      });
      expect(sent.status).toBe(201);
      messageId = sent.body.message_id;

      const got = await s.request('GET', s.chat(`/rooms/r1/messages/${messageId}`), { token: as('ben') });
      expect(got.status).toBe(200);
      expect(got.body.parts).toEqual([
        { type: 'text/plain', content: 'see attached' },
        {
          type: 'application/json',
          attachment: {
            id: attachmentId,
            download_url: expect.stringMatching(/^http:\/\//),
            refresh_url: expect.stringContaining(`/services/chatkit/v6/${s.instanceId}/rooms/r1/attachments/${attachmentId}`),
            expiration: expect.any(String),
            name: 'data.json',
            size: data.length,
            custom_data: { k: 1 },
          },
        },
      ]);
      const attachment = got.body.parts[1].attachment;
      expect(new Date(attachment.expiration).toISOString()).toBe(attachment.expiration);
      expect(minutesAhead(attachment.expiration)).toBeGreaterThanOrEqual(30);

      const download = await raw('GET', attachment.download_url);
      expect(download.status).toBe(200);
      expect(download.bytes.equals(data)).toBe(true);
      expect(download.headers.get('content-type')).toBe('application/json');
      expect(download.headers.get('x-content-type-options')).toBe('nosniff');
      expect(download.headers.get('content-disposition')).toContain('filename="data.json"');
      const head = await raw('HEAD', attachment.download_url);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(data.length));
      expect(head.bytes.length).toBe(0);

      const page = await s.request('GET', s.chat('/rooms/r1/messages?limit=1'), { token: as('ben') });
      expect(page.body[0].parts[1].attachment.id).toBe(attachmentId);
    });

    it('refreshes a download link through the refresh route (what chatkit-client url() calls)', async () => {
      const refreshed = await s.request('GET', s.chat(`/rooms/r1/attachments/${attachmentId}`), { token: as('ben') });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toEqual({ download_url: expect.any(String), expiration: expect.any(String) });
      expect(minutesAhead(refreshed.body.expiration)).toBeGreaterThanOrEqual(30);
      expect((await raw('GET', refreshed.body.download_url)).bytes.equals(data)).toBe(true);

      expect((await s.request('GET', s.chat(`/rooms/r2/attachments/${attachmentId}`), { token: as('ben') })).status).toBe(404);
      const unknown = await s.request('GET', s.chat('/rooms/r1/attachments/nope'), { token: as('ben') });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('services/chatkit/not_found/attachment_not_found');
    });

    it('shows the same message through v2 as text plus a file attachment whose resource_link serves the bytes', async () => {
      const v2 = await s.request('GET', s.chat('/rooms/r1/messages?limit=5', 'v2'), { token: as('ben') });
      expect(v2.status).toBe(200);
      const message = v2.body.find((m: { id: number }) => m.id === messageId);
      expect(message).toMatchObject({
        id: messageId,
        text: 'see attached',
        attachment: { resource_link: expect.any(String), type: 'file' },
      });
      const download = await raw('GET', message.attachment.resource_link);
      expect(download.status).toBe(200);
      expect(download.bytes.equals(data)).toBe(true);
    });

    it('takes a repeated upload of the same bytes, and refuses other bytes once uploaded', async () => {
      const created = await announce('r1', { content_type: 'text/plain', content_length: 5 });
      const url = created.body.upload_url;
      expect((await raw('PUT', url, Buffer.from('hello'))).status).toBe(204);
      expect((await raw('PUT', url, Buffer.from('hello'))).status).toBe(204);
      const other = await raw('PUT', url, Buffer.from('HELLO'));
      expect(other.status).toBe(409);
      expect(other.json.error).toBe('conflict/already_uploaded');
    });

    it('stores binary bytes of any content type up to 5 MiB', async () => {
      const png = randomBytes(FIVE_MIB);
      const id = await uploadAttachment('r1', png, 'image/png', { name: 'big.png' });
      const sent = await s.request('POST', s.chat('/rooms/r1/messages'), {
        body: { parts: [{ type: 'image/png', attachment: { id } }] },
        token: as('ben'),
      });
      expect(sent.status).toBe(201);
      const got = await s.request('GET', s.chat(`/rooms/r1/messages/${sent.body.message_id}`), { token: as('ann') });
      const download = await raw('GET', got.body.parts[0].attachment.download_url);
      expect(download.headers.get('content-type')).toBe('image/png');
      expect(download.bytes.equals(png)).toBe(true);
      const v2 = await s.request('GET', s.chat('/rooms/r1/messages?limit=1', 'v2'), { token: as('ann') });
      expect(v2.body[0].attachment.type).toBe('image');
    });
  });

  describe('errors', () => {
    it('refuses more than 5 MiB with 413', async () => {
      const res = await announce('r1', { content_type: 'image/png', content_length: FIVE_MIB + 1 });
      expect(res.status).toBe(413);
      expect(res.body.error).toBe('services/chatkit/payload_too_large/attachment_too_large');
      expect(res.body.error_description).toMatch(/5 MiB/);
    });

    it('validates the announcement (422)', async () => {
      expect((await announce('r1', { content_length: 3 })).status).toBe(422);
      expect((await announce('r1', { content_type: 'text/plain', content_length: -1 })).status).toBe(422);
      expect((await announce('r1', { content_type: 'text/plain', content_length: 'x' })).status).toBe(422);
    });

    it('lets only members (or su) announce attachments, in rooms that exist', async () => {
      const outsider = await announce('r1', { content_type: 'text/plain', content_length: 1 }, 'cat');
      expect(outsider.status).toBe(403);
      expect(outsider.body.error).toBe('services/chatkit/forbidden/not_a_member');
      const missing = await announce('nope', { content_type: 'text/plain', content_length: 1 });
      expect(missing.status).toBe(404);
      const su = await s.request('POST', s.chat('/rooms/r1/attachments'), {
        body: { content_type: 'text/plain', content_length: 1 },
        token: s.token({ sub: 'cat', su: true }),
      });
      expect(su.status).toBe(201);
      const noUser = await s.request('POST', s.chat('/rooms/r1/attachments'), { body: { content_type: 'text/plain', content_length: 1 } });
      expect(noUser.status).toBe(400);
    });

    it('refuses an upload of another length than announced (400), and then takes the right one', async () => {
      const created = await announce('r1', { content_type: 'text/plain', content_length: 10 });
      const short = await raw('PUT', created.body.upload_url, Buffer.from('12345'));
      expect(short.status).toBe(400);
      expect(short.json.error).toBe('bad_request/wrong_content_length');
      const long = await raw('PUT', created.body.upload_url, Buffer.from('1234567890ABC'));
      expect(long.status).toBe(400);
      // Without Content-Length (chunked), the length is checked once the body has ended.
      const chunked = await fetch(created.body.upload_url, {
        method: 'PUT',
        body: new Blob(['12345']).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(400);
      expect(((await chunked.json()) as { error: string }).error).toBe('bad_request/wrong_content_length');
      expect((await raw('PUT', created.body.upload_url, Buffer.from('1234567890'))).status).toBe(204);
    });

    it('refuses unknown, foreign and not yet uploaded attachments in messages', async () => {
      const send = (attachment: { id: string }) =>
        s.request('POST', s.chat('/rooms/r1/messages'), {
          body: { parts: [{ type: 'text/plain', attachment }] },
          token: as('ann'),
        });
      const unknown = await send({ id: '00000000-0000-4000-8000-000000000000' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('services/chatkit/not_found/attachment_not_found');
      expect((await send({ id: '../etc/passwd' })).status).toBe(404);

      const elsewhere = await uploadAttachment('r2', Buffer.from('r2 bytes'), 'text/plain');
      expect((await send({ id: elsewhere })).status).toBe(404);

      const pending = await announce('r1', { content_type: 'text/plain', content_length: 3 });
      const notYet = await send({ id: pending.body.attachment_id });
      expect(notYet.status).toBe(422);
      expect(notYet.body.error).toBe('services/chatkit/unprocessable_entity/attachment_not_uploaded');
    });

    it('answers 403 JSON for tampered and expired signatures, on uploads and downloads', async () => {
      const created = await announce('r1', { content_type: 'text/plain', content_length: 2 });
      const url = new URL(created.body.upload_url);
      const tampered = new URL(url);
      tampered.searchParams.set('sig', url.searchParams.get('sig')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')));
      const res = await raw('PUT', tampered.toString(), Buffer.from('ok'));
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json.error).toBe('forbidden/invalid_signature');

      const later = new URL(url);
      later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
      expect((await raw('PUT', later.toString(), Buffer.from('ok'))).status).toBe(403);
      const unsigned = new URL(url);
      unsigned.search = '';
      expect((await raw('PUT', unsigned.toString(), Buffer.from('ok'))).status).toBe(403);

      const id = created.body.attachment_id;
      const past = Math.floor(Date.now() / 1000) - 10;
      const expiredUpload = signer().signedPath('PUT', `/attachments/upload/${s.instanceId}/${id}`, past);
      const expired = await raw('PUT', expiredUpload, Buffer.from('ok'));
      expect(expired.status).toBe(403);
      expect(expired.json.error).toBe('forbidden/link_expired');
      expect((await raw('PUT', url.toString(), Buffer.from('ok'))).status).toBe(204);

      const expiredDownload = signer().signedPath('GET', `/attachments/download/${s.instanceId}/${id}`, past);
      expect((await raw('GET', expiredDownload)).json.error).toBe('forbidden/link_expired');
      const otherAttachment = signer().signedPath('GET', `/attachments/download/${s.instanceId}/${id}`, past + 7200);
      // Another id under this id's signature (its last character changed, whatever it was).
      const otherId = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
      expect((await raw('GET', otherAttachment.replace(id, otherId))).status).toBe(403);
      expect((await raw('GET', otherAttachment)).bytes.toString()).toBe('ok');
    });

    it('keeps private rooms private on the refresh route', async () => {
      const id = await uploadAttachment('hidden', Buffer.from('secret'), 'text/plain');
      expect((await s.request('GET', s.chat(`/rooms/hidden/attachments/${id}`), { token: as('ben') })).status).toBe(404);
      expect((await s.request('GET', s.chat(`/rooms/hidden/attachments/${id}`), { token: as('ann') })).status).toBe(200);
      expect((await s.request('GET', s.chat(`/rooms/hidden/attachments/${id}`), { token: null })).status).toBe(401);
    });
  });

  describe('files API (v2 data attachments)', () => {
    const json = Buffer.from('{"file":"api"}');
    const form = (bytes: Buffer, type: string, name: string, field = 'file') => {
      const body = new FormData();
      body.append('note', 'ignored');
      body.append(field, new Blob([new Uint8Array(bytes)], { type }), name);
      return body;
    };
    const post = (path: string, body: FormData, user = 'ann') =>
      fetch(s.baseUrl + files(path), { method: 'POST', body, headers: { authorization: `Bearer ${as(user)}` } }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as any }),
      );
    let resourceLink: string;
    /** The link a v2 read of the message shows: it serves the bytes without a token. */
    let messageLink: string;

    it('uploads a file and answers a v2 attachment {resource_link, type}: the get-file call of the file', async () => {
      const res = await post('/rooms/r1/users/ann/files/data.json', form(json, 'application/json', 'data.json'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ resource_link: s.baseUrl + files('/rooms/r1/files/data.json'), type: 'file', name: 'data.json' });
      resourceLink = res.body.resource_link;
      const record = await s.request('GET', files('/rooms/r1/files/data.json'), { token: as('ben') });
      const download = await raw('GET', record.body.resource_link);
      expect(download.status).toBe(200);
      expect(download.bytes.equals(json)).toBe(true);
      expect(download.headers.get('content-type')).toBe('application/json');

      const image = await post('/rooms/r1/users/ann/files/cat.png', form(randomBytes(100), 'image/png', 'cat.png'));
      expect(image.body.type).toBe('image');
      const audio = await post('/rooms/r1/users/ann/files/a.mp3', form(randomBytes(10), 'audio/mpeg', 'a.mp3'));
      expect(audio.body.type).toBe('audio');
    });

    it('sends the upload as a v2 message attachment that reads back with working links', async () => {
      const sent = await s.request('POST', s.chat('/rooms/r1/messages', 'v2'), {
        body: { text: 'a file', attachment: { resource_link: resourceLink, type: 'file' } },
        token: as('ann'),
      });
      expect(sent.status).toBe(201);
      const v2 = await s.request('GET', s.chat('/rooms/r1/messages?limit=1', 'v2'), { token: as('ben') });
      expect(v2.body[0]).toMatchObject({ text: 'a file', attachment: { resource_link: expect.any(String), type: 'file', name: 'data.json' } });
      messageLink = v2.body[0].attachment.resource_link;
      const download = await raw('GET', messageLink);
      expect(download.status).toBe(200);
      expect(download.bytes.equals(json)).toBe(true);
    });

    it('gets the file record with an expiring link', async () => {
      const res = await s.request('GET', files('/rooms/r1/files/data.json'), { token: as('ben') });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        file: { name: `${s.instanceId}/r1/data.json`, bytes: json.length, last_modified: expect.any(Number) },
        resource_link: expect.any(String),
        ttl: expect.any(Number),
      });
      expect(Math.abs(res.body.file.last_modified - Date.now() / 1000)).toBeLessThan(120);
      expect(res.body.ttl - Date.now() / 1000).toBeGreaterThan(30 * 60);
      expect((await raw('GET', res.body.resource_link)).bytes.equals(json)).toBe(true);
      const missing = await s.request('GET', files('/rooms/r1/files/nothing.txt'), { token: as('ben') });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('services/chatkit_files/not_found/file_not_found');
      expect((await s.request('GET', files('/rooms/r1/files/data.json'), { token: null })).status).toBe(401);
    });

    it('serves the newest upload under a name, while older links keep working', async () => {
      const v2 = Buffer.from('{"file":"api","v":2}');
      const again = await post('/rooms/r1/users/ben/files/data.json', form(v2, 'application/json', 'data.json'), 'ben');
      expect(again.status).toBe(200);
      const record = await s.request('GET', files('/rooms/r1/files/data.json'), { token: as('ann') });
      expect(record.body.file.bytes).toBe(v2.length);
      expect((await raw('GET', record.body.resource_link)).bytes.equals(v2)).toBe(true);
      expect((await raw('GET', messageLink)).bytes.equals(json)).toBe(true);
    });

    it('refuses bad names, other users, non-members, missing parts, non-multipart bodies and more than 5 MiB', async () => {
      const badName = await post('/rooms/r1/users/ann/files/a%2Fb', form(json, 'application/json', 'x'));
      expect(badName.status).toBe(400);
      expect(badName.body.error).toBe('services/chatkit_files/bad_request/invalid_file_name');
      const other = await post('/rooms/r1/users/ben/files/x.json', form(json, 'application/json', 'x'));
      expect(other.status).toBe(403);
      const outsider = await post('/rooms/r1/users/cat/files/x.json', form(json, 'application/json', 'x'), 'cat');
      expect(outsider.status).toBe(403);
      const noFile = await post('/rooms/r1/users/ann/files/x.json', form(json, 'application/json', 'x', 'document'));
      expect(noFile.status).toBe(400);
      expect(noFile.body.error).toBe('services/chatkit_files/bad_request/missing_file');
      const notForm = await s.request('POST', files('/rooms/r1/users/ann/files/x.json'), { body: { a: 1 }, token: as('ann') });
      expect(notForm.status).toBe(400);
      const big = await post('/rooms/r1/users/ann/files/big.bin', form(randomBytes(FIVE_MIB + 10), 'application/octet-stream', 'big.bin'));
      expect(big.status).toBe(400);
      expect(big.body.error).toBe('services/chatkit_files/bad_request/file_too_large');
      expect((await s.request('GET', files('/rooms/r1/files/big.bin'), { token: as('ann') })).status).toBe(404);
    });

    it('deletes a file (uploader of the current version or su), and its links stop working', async () => {
      const byOther = await s.request('DELETE', files('/rooms/r1/files/data.json'), { token: as('ann') });
      expect(byOther.status).toBe(403);
      const deleted = await s.request('DELETE', files('/rooms/r1/files/data.json'), { token: as('ben') });
      expect(deleted.status).toBe(204);
      expect((await s.request('GET', files('/rooms/r1/files/data.json'), { token: as('ann') })).status).toBe(404);
      expect((await raw('GET', messageLink)).status).toBe(404);
      expect((await s.request('DELETE', files('/rooms/r1/files/data.json'), { token: as('ben') })).status).toBe(404);
    });

    it("deletes all of a user's files", async () => {
      expect((await s.request('DELETE', files('/users/ann'), { token: as('ben') })).status).toBe(403);
      const res = await s.request('DELETE', files('/users/ann'), { token: as('ann') });
      expect(res.status).toBe(200);
      expect((await s.request('GET', files('/rooms/r1/files/cat.png'), { token: as('ann') })).status).toBe(404);
      expect((await s.request('GET', files('/rooms/r1/files/a.mp3'), { token: as('ann') })).status).toBe(404);
    });
  });

  it("drops a deleted room's attachments: their links stop working", async () => {
    await s.request('POST', s.chat('/rooms'), { body: { id: 'temp', name: 'temp' }, token: as('ann') });
    const id = await uploadAttachment('temp', Buffer.from('short-lived'), 'text/plain');
    const refreshed = await s.request('GET', s.chat(`/rooms/temp/attachments/${id}`), { token: as('ann') });
    expect((await raw('GET', refreshed.body.download_url)).status).toBe(200);
    expect((await s.request('DELETE', s.chat('/rooms/temp'))).status).toBeLessThan(300);
    expect((await raw('GET', refreshed.body.download_url)).status).toBe(404);
  });
});

describe('PUBLIC_URL', () => {
  it('names the origin of every link the server hands out, behind a proxy for instance', async () => {
    const s = await startTestServer({ env: { PUBLIC_URL: 'https://chat.example.test/' } });
    try {
      const as = (sub: string) => s.token({ sub });
      await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'ann' } });
      await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1' }, token: as('ann') });
      const created = await s.request('POST', s.chat('/rooms/r1/attachments'), {
        body: { content_type: 'text/plain', content_length: 2 },
        token: as('ann'),
      });
      const upload = new URL(created.body.upload_url);
      expect(upload.origin).toBe('https://chat.example.test');
      // The host is not signed: the same path and query work when reached directly.
      const put = await fetch(s.baseUrl + upload.pathname + upload.search, { method: 'PUT', body: 'ok' });
      expect(put.status).toBe(204);
      const id = created.body.attachment_id;
      const sent = await s.request('POST', s.chat('/rooms/r1/messages'), {
        body: { parts: [{ type: 'text/plain', attachment: { id } }] },
        token: as('ann'),
      });
      const got = await s.request('GET', s.chat(`/rooms/r1/messages/${sent.body.message_id}`), { token: as('ann') });
      const { download_url, refresh_url } = got.body.parts[0].attachment;
      expect(new URL(download_url).origin).toBe('https://chat.example.test');
      expect(refresh_url).toBe(`https://chat.example.test/services/chatkit/v6/${s.instanceId}/rooms/r1/attachments/${id}`);
      const direct = new URL(download_url);
      expect(await (await fetch(s.baseUrl + direct.pathname + direct.search)).text()).toBe('ok');
    } finally {
      await s.close();
    }
  });
});
