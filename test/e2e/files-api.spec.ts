import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/test-server';
import { rawRequest } from '../support/raw-request';
import { eventually } from '../support/waiting';

const FIVE_MIB = 5 * 1024 * 1024;

/** Every blob file under the data directory's blob store (temporaries included). */
const blobFiles = (dataDir: string): string[] => {
  const found: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.push(path);
    }
  };
  walk(join(dataDir, 'blobs'));
  return found;
};

describe('files API (chatkit_files v1) as the seed writes it', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const files = (path: string) => `/services/chatkit_files/v1/${s.instanceId}${path}`;

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat', 'dan', 'eve'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    for (const id of ['r1', 'r2', 'gone']) {
      const made = await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['ben', 'cat', 'dan', 'eve'] }, token: as('ann') });
      expect(made.status).toBe(201);
    }
  });
  afterAll(() => s.close());

  const raw = (method: string, url: string, body?: Buffer, headers: Record<string, string> = {}) =>
    rawRequest(s.baseUrl, method, url, body, headers);

  const form = (parts: { field: string; bytes: Buffer | string; type?: string; filename?: string }[], boundary = 'XyZ123boundary') =>
    Buffer.concat([
      ...parts.flatMap((p) => [
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"` +
            (p.filename !== undefined ? `; filename="${p.filename}"` : '') +
            `\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
        ),
        Buffer.isBuffer(p.bytes) ? p.bytes : Buffer.from(p.bytes),
        Buffer.from('\r\n'),
      ]),
      Buffer.from(`--${boundary}--\r\n`),
    ]);

  const upload = (room: string, user: string, name: string, body: Buffer, contentType = 'multipart/form-data; boundary=XyZ123boundary') =>
    raw('POST', files(`/rooms/${room}/users/${user}/files/${name}`), body, {
      'content-type': contentType,
      authorization: `Bearer ${as(user)}`,
    });

  const uploadFile = (room: string, user: string, name: string, bytes: Buffer | string, type: string) =>
    upload(room, user, name, form([{ field: 'note', bytes: 'ignored' }, { field: 'file', bytes, type, filename: name }]));

  const getFile = (room: string, name: string, user = 'ben') => s.request('GET', files(`/rooms/${room}/files/${name}`), { token: as(user) });

  describe('upload', () => {
    it('answers {resource_link, type}: resource_link is the get-file call of this file, type from the content type', async () => {
      const res = await uploadFile('r1', 'ann', 'notes.txt', 'hello files', 'text/plain');
      expect(res.status).toBe(200);
      // `name` as well: chatkit-client sends this object on as the v2 attachment, and its tests expect a name.
      expect(res.json).toEqual({ resource_link: `${s.baseUrl}${files('/rooms/r1/files/notes.txt')}`, type: 'file', name: 'notes.txt' });
      const record = await s.request('GET', res.json.resource_link.slice(s.baseUrl.length), { token: as('ben') });
      expect(record.status).toBe(200);
      expect(record.body.file).toEqual({ name: `${s.instanceId}/r1/notes.txt`, bytes: 11, last_modified: expect.any(Number) });

      for (const [type, kind] of [
        ['image/png', 'image'],
        ['video/mp4', 'video'],
        ['audio/mpeg', 'audio'],
        ['application/pdf', 'file'],
      ]) {
        const kindRes = await uploadFile('r1', 'ann', `k.${kind}`, randomBytes(20), type);
        expect(kindRes.json.type).toBe(kind);
      }
    });

    it('takes the name of the file a user picked, as chatkit-client sends it ("file: with spaces.json" in its own suite), and serves it back', async () => {
      const name = 'file: with spaces.json';
      const res = await uploadFile('r1', 'ann', encodeURIComponent(name), '{"hello":"world"}', 'application/json');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ resource_link: `${s.baseUrl}${files(`/rooms/r1/files/${encodeURIComponent(name)}`)}`, type: 'file', name });
      const record = await s.request('GET', res.json.resource_link.slice(s.baseUrl.length), { token: as('ben') });
      expect(record.body.file).toEqual({ name: `${s.instanceId}/r1/${name}`, bytes: 17, last_modified: expect.any(Number) });
      expect(JSON.parse((await raw('GET', record.body.resource_link)).bytes.toString())).toEqual({ hello: 'world' });
    });

    it('takes a file of exactly 5 MiB', async () => {
      const bytes = randomBytes(FIVE_MIB);
      expect((await uploadFile('r2', 'ann', 'big.bin', bytes, 'application/octet-stream')).status).toBe(200);
      const record = await getFile('r2', 'big.bin');
      expect(record.body.file.bytes).toBe(FIVE_MIB);
      expect((await raw('GET', record.body.resource_link)).bytes.equals(bytes)).toBe(true);
    });
  });

  it('refuses an upload without file:create (403 missing_permission), stores nothing, and allows it once granted in that room', async () => {
    const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
    // eve's global role replaces `default` and lacks file:create.
    expect((await s.request('POST', authz('/roles'), { body: { name: 'reader', scope: 'global', permissions: ['room:get'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/eve/roles'), { body: { name: 'reader' } })).status).toBe(201);
    const blobsBefore = blobFiles(s.dataDir);
    const refused = await uploadFile('r2', 'eve', 'denied.txt', 'nope', 'text/plain');
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe('services/chatkit_files/forbidden/missing_permission');
    expect(refused.json.error_description).toContain('file:create');
    expect((await getFile('r2', 'denied.txt')).status).toBe(404);
    expect(blobFiles(s.dataDir).sort()).toEqual(blobsBefore.sort());
    // A room role grants it in its room only.
    expect((await s.request('POST', authz('/roles'), { body: { name: 'uploader', scope: 'room', permissions: ['file:create'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/eve/roles'), { body: { name: 'uploader', room_id: 'r2' } })).status).toBe(201);
    expect((await uploadFile('r2', 'eve', 'allowed.txt', 'yes', 'text/plain')).status).toBe(200);
    expect((await uploadFile('r1', 'eve', 'elsewhere.txt', 'no', 'text/plain')).status).toBe(403);
    expect((await s.request('DELETE', authz('/users/eve/roles'))).status).toBe(204);
  });

  describe('v2 messages', () => {
    it('a message whose attachment came from the files API reads back with a link that serves the bytes without a token', async () => {
      const up = await uploadFile('r1', 'ann', 'report.json', '{"v":1}', 'application/json');
      const sent = await s.request('POST', s.chat('/rooms/r1/messages', 'v2'), {
        body: { text: 'the report', attachment: up.json },
        token: as('ann'),
      });
      expect(sent.status).toBe(201);
      // A newer upload of the same name does not change the message: it keeps the file it was sent with.
      expect((await uploadFile('r1', 'ann', 'report.json', '{"v":2}', 'application/json')).status).toBe(200);

      const [v2] = (await s.request('GET', s.chat('/rooms/r1/messages?limit=1', 'v2'), { token: as('ben') })).body;
      expect(v2).toMatchObject({ id: sent.body.message_id, text: 'the report', attachment: { type: 'file', name: 'report.json' } });
      const download = await raw('GET', v2.attachment.resource_link);
      expect(download.status).toBe(200);
      expect(download.bytes.toString()).toBe('{"v":1}');

      const v6 = await s.request('GET', s.chat(`/rooms/r1/messages/${sent.body.message_id}`), { token: as('ben') });
      // As Chatkit showed a v2 file through v6 (chatkit-client's own tests): file/x-pusher-file.
      expect(v6.body.parts[1]).toMatchObject({ type: 'file/x-pusher-file', attachment: { name: 'report.json', size: 7 } });
      expect((await raw('GET', v6.body.parts[1].attachment.download_url)).bytes.toString()).toBe('{"v":1}');
    });

    it('keeps other links, and files API links of other rooms, as the URLs they are', async () => {
      const up = await uploadFile('r2', 'ann', 'elsewhere.txt', 'r2', 'text/plain');
      for (const link of [up.json.resource_link, 'https://example.com/a.png', `${s.baseUrl}${files('/rooms/r1/files/never.txt')}`]) {
        const sent = await s.request('POST', s.chat('/rooms/r1/messages', 'v2'), {
          body: { text: 'link', attachment: { resource_link: link, type: 'image' } },
          token: as('ann'),
        });
        expect(sent.status).toBe(201);
        const [v2] = (await s.request('GET', s.chat('/rooms/r1/messages?limit=1', 'v2'), { token: as('ben') })).body;
        expect(v2.attachment).toEqual({ resource_link: link, type: 'image', name: link.split('/').pop() });
      }
    });
  });

  describe('deleting removes the bytes from the blob store', () => {
    /** Uploads and answers the blob files it added. */
    const uploadedBlobs = async (room: string, user: string, name: string): Promise<string[]> => {
      const before = new Set(blobFiles(s.dataDir));
      expect((await uploadFile(room, user, name, randomBytes(64), 'application/octet-stream')).status).toBe(200);
      const added = blobFiles(s.dataDir).filter((f) => !before.has(f));
      expect(added).toHaveLength(1);
      return added;
    };
    const gone = (paths: string[]) => () => blobFiles(s.dataDir).filter((f) => paths.includes(f)).length === 0;

    it('a deleted file: gone when DELETE answers, and 404 after', async () => {
      const blobs = await uploadedBlobs('r1', 'ann', 'bye.bin');
      expect((await s.request('DELETE', files('/rooms/r1/files/bye.bin'), { token: as('ann') })).status).toBe(204);
      expect(gone(blobs)()).toBe(true);
      expect((await getFile('r1', 'bye.bin')).status).toBe(404);
    });

    it("a user's files, through the files API", async () => {
      const blobs = [...(await uploadedBlobs('r1', 'cat', 'c1.bin')), ...(await uploadedBlobs('r2', 'cat', 'c2.bin'))];
      expect((await s.request('DELETE', files('/users/cat'), { token: as('cat') })).status).toBe(200);
      expect(gone(blobs)()).toBe(true);
    });

    it("a deleted room's files and attachments", async () => {
      const blobs = await uploadedBlobs('gone', 'ben', 'in-room.bin');
      const announced = await s.request('POST', s.chat('/rooms/gone/attachments'), {
        body: { content_type: 'text/plain', content_length: 2 },
        token: as('ben'),
      });
      const before = new Set(blobFiles(s.dataDir));
      expect((await raw('PUT', announced.body.upload_url, Buffer.from('ok'))).status).toBe(204);
      blobs.push(...blobFiles(s.dataDir).filter((f) => !before.has(f)));
      expect(blobs).toHaveLength(2);
      expect((await s.request('DELETE', s.chat('/rooms/gone'))).status).toBeLessThan(300);
      await eventually(gone(blobs), { everyMs: 100 });
    });

    it('a deleted user\'s files API uploads (the chat API\'s delete user)', async () => {
      const blobs = await uploadedBlobs('r2', 'eve', 'mine.bin');
      expect((await s.request('DELETE', s.chat('/users/eve'))).status).toBeLessThan(300);
      await eventually(gone(blobs), { everyMs: 100 });
      expect((await getFile('r2', 'mine.bin', 'ann')).status).toBe(404);
    });
  });

  describe('malformed bodies: 400 JSON, nothing stored', () => {
    const refused = async (res: { status: number; json: any; headers: Headers }, reason?: string) => {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.json.error).toEqual(expect.stringMatching(/^services\/chatkit_files\/bad_request\//));
      if (reason) expect(res.json.error).toBe(`services/chatkit_files/bad_request/${reason}`);
      expect(res.json.error_description).toEqual(expect.any(String));
    };
    const good = () => form([{ field: 'file', bytes: 'x', type: 'text/plain', filename: 'x' }]);
    let blobsBefore: string[];

    beforeAll(() => {
      blobsBefore = blobFiles(s.dataDir);
    });

    it('no boundary, a wrong boundary, not multipart at all', async () => {
      await refused(await upload('r1', 'dan', 'bad.txt', good(), 'multipart/form-data'));
      await refused(await upload('r1', 'dan', 'bad.txt', good(), 'multipart/form-data; boundary=other'));
      await refused(await upload('r1', 'dan', 'bad.txt', good(), 'application/json'), 'not_multipart');
      await refused(await upload('r1', 'dan', 'bad.txt', Buffer.from('{"a":1}'), 'multipart/form-data; boundary=XyZ123boundary'));
    });

    it('a truncated body', async () => {
      const whole = form([{ field: 'file', bytes: randomBytes(200_000), type: 'application/octet-stream', filename: 'x' }]);
      await refused(await upload('r1', 'dan', 'bad.txt', whole.subarray(0, 100_000)));
      await refused(await upload('r1', 'dan', 'bad.txt', whole.subarray(0, whole.length - 10)));
    });

    it('no part named file, and a file field sent as plain text', async () => {
      await refused(await upload('r1', 'dan', 'bad.txt', form([{ field: 'document', bytes: 'x', type: 'text/plain', filename: 'x' }])), 'missing_file');
      await refused(await upload('r1', 'dan', 'bad.txt', form([{ field: 'file', bytes: 'just text' }])), 'missing_file');
    });

    it('a second file', async () => {
      const two = form([
        { field: 'file', bytes: 'one', type: 'text/plain', filename: 'a' },
        { field: 'file', bytes: 'two', type: 'text/plain', filename: 'b' },
      ]);
      await refused(await upload('r1', 'dan', 'bad.txt', two), 'more_than_one_file');
    });

    it('an oversize part', async () => {
      const res = await uploadFile('r1', 'dan', 'bad.txt', randomBytes(FIVE_MIB + 1), 'application/octet-stream');
      await refused(res, 'file_too_large');
      expect(res.json.error_description).toMatch(/5 MiB/);
    });

    it('a file name with a path separator or control characters, or longer than 255 characters', async () => {
      await refused(await upload('r1', 'dan', 'a%2Fb', good()), 'invalid_file_name');
      await refused(await upload('r1', 'dan', 'a%5Cb', good()), 'invalid_file_name');
      await refused(await upload('r1', 'dan', 'bad%0Aname', good()), 'invalid_file_name');
      await refused(await upload('r1', 'dan', 'x'.repeat(256), good()), 'invalid_file_name');
    });

    it('left no blob and no record behind', async () => {
      expect((await getFile('r1', 'bad.txt')).status).toBe(404);
      expect(blobFiles(s.dataDir).sort()).toEqual(blobsBefore.sort());
    });
  });
});
