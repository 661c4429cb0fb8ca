import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { scanForMarkers } from '../support/byte-scan';
import { rawRequest } from '../support/raw-request';
import { ServerProcess, startProcess } from '../support/server-process';

const INSTANCE = 'logged';
const SECRET = 'logged-key-secret-0123456789';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

/**
 * The server's log (stdout and stderr of the built server, at its most verbose level) never
 * holds what people wrote: names, avatar URLs, custom_data, message text, attachment names
 * and bytes, through sends, edits, refused requests and deletes.
 */
describe('the server log holds no content', () => {
  let dataDir: string;
  let server: ServerProcess;
  const token = (claims: { sub?: string; su?: boolean }) =>
    jwt.sign({ instance: INSTANCE, iss: 'api_keys/k', ...claims }, SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const su = token({ su: true });
  const call = async (method: string, path: string, body?: unknown, bearer = su, rawBody?: string) => {
    const response = await rawRequest(
      `http://127.0.0.1:${server.port}`,
      method,
      `/services/chatkit/v6/${INSTANCE}${path}`,
      rawBody !== undefined ? Buffer.from(rawBody) : body !== undefined ? Buffer.from(JSON.stringify(body)) : undefined,
      { authorization: `Bearer ${bearer}`, ...((body !== undefined || rawBody !== undefined) && { 'content-type': 'application/json' }) },
    );
    return response;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-log-content-'));
    server = await startProcess('dist/src/main.js', {
      DATA_DIR: dataDir,
      INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
      INSTANCE_KEY: `k:${SECRET}`,
      LOG_LEVEL: 'trace',
    });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('after sends, edits, refused requests and deletes carrying markers', async () => {
    const markers: string[] = [];
    const m = (what: string) => {
      const made = marker(what);
      markers.push(made);
      return made;
    };
    const ann = token({ sub: 'ann' });
    expect((await call('POST', '/users', { id: 'ann', name: m('name'), avatar_url: `https://x.test/${m('avatar')}`, custom_data: { k: m('user-custom') } })).status).toBe(201);
    expect((await call('POST', '/users', { id: 'ben', name: 'ben' })).status).toBe(201);
    expect((await call('PUT', '/users/ann', { name: m('renamed') })).status).toBe(204);
    const room = await call('POST', '/rooms', { id: 'r1', name: m('room-name'), custom_data: { k: m('room-custom') }, user_ids: ['ben'] }, ann);
    expect(room.status).toBe(201);
    expect((await call('PUT', '/rooms/r1', { name: m('room-renamed') })).status).toBe(204);

    const sent = await call('POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: m('v6-text') }] }, ann);
    expect(sent.status).toBe(201);
    const v2 = await rawRequest(`http://127.0.0.1:${server.port}`, 'POST', `/services/chatkit/v2/${INSTANCE}/rooms/r1/messages`, Buffer.from(JSON.stringify({ text: m('v2-text') })), {
      authorization: `Bearer ${ann}`,
      'content-type': 'application/json',
    });
    expect(v2.status).toBe(201);
    const edit = await call('PUT', `/rooms/r1/messages/${sent.json.message_id}`, { parts: [{ type: 'text/plain', content: m('edited-text') }] }, ann);
    expect(edit.status).toBe(204);

    const bytes = Buffer.from(m('attachment-bytes'));
    const announced = await call('POST', '/rooms/r1/attachments', { content_type: 'text/plain', content_length: bytes.length, name: m('attachment-name') }, ann);
    expect(announced.status).toBe(201);
    expect((await rawRequest('', 'PUT', announced.json.upload_url, bytes, { 'content-type': 'text/plain' })).status).toBe(204);

    // Refused requests that carry content: each answered 4xx, none logged with what it carried.
    const refusals = [
      await call('POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: `${m('too-large')}${'x'.repeat(6_000)}` }] }, ann),
      await call('POST', '/rooms/r1/messages', undefined, ann, `{"parts": [{"type": "text/plain", "content": "${m('broken-json')}"`),
      await call('POST', '/users', { id: 'ann', name: m('duplicate-user') }),
      await call('POST', '/users', { id: 'cat', name: { not: m('wrong-type') } }),
      await call('POST', '/rooms/nowhere/messages', { parts: [{ type: 'text/plain', content: m('no-such-room') }] }, ann),
      await call('POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: m('not-a-member') }] }, token({ sub: 'stranger' })),
    ];
    for (const refused of refusals) expect(refused.status).toBeGreaterThanOrEqual(400);
    for (const refused of refusals) expect(refused.status).toBeLessThan(500);

    expect((await call('DELETE', `/rooms/r1/messages/${sent.json.message_id}`)).status).toBe(204);
    expect((await call('DELETE', '/users/ann')).status).toBe(204);
    expect((await call('DELETE', '/rooms/r1')).status).toBe(204);

    await server.stop();
    const log = server.output.join('\n');
    expect(log).toContain('"msg":"request"'); // the access log was written, at the most verbose level
    expect(scanForMarkers({ texts: { 'server log': log } }, markers)).toEqual([]);
  });
});
