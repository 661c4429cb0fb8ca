/**
 * Bodies over a route's limit, sent as clients send them: the whole body written before the
 * answer is read, over a real socket. The client reads the documented error — 413 JSON on the
 * Chatkit APIs, Beams' 400 "body too large" — and never a reset (EPIPE, ECONNRESET).
 */
import { connect } from 'node:net';
import { startTestServer, TestServer } from '../support/test-server';
import { sendWholeBody, WholeBodyAnswer } from '../support/whole-body-request';
import { UNREAD_BODY_DRAIN_LIMIT_BYTES } from '../../src/shared/http/unread-body-drain';

const TWELVE_MB = 12 * 1000 * 1000;

/** Writes raw HTTP/1.1 on one connection and answers everything the server sent until it closed it. */
const exchange = (port: number, ...writes: string[]): Promise<string> =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    for (const write of writes) socket.write(write);
  });

describe('bodies over a route\'s limit are answered, and the answer can be read', () => {
  let s: TestServer;
  let port: number;
  const as = (sub: string) => s.token({ sub });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    s = await startTestServer();
    port = s.server.httpPort;
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1' }, token: as('ann') })).status).toBe(201);
  });
  afterAll(() => s.close());

  /** The client wrote every byte, and the socket was never cut under it. */
  const readWhole = (answer: WholeBodyAnswer, size = TWELVE_MB) => {
    expect(answer.socketError).toBeUndefined();
    expect(answer.written).toBe(size);
  };

  it.each([
    ['with Content-Length', false],
    ['chunked', true],
  ])('POST /rooms/:id/messages (v2) with 12 MB %s: 413 payload_too_large/body_too_large', async (_how, chunked) => {
    const answer = await sendWholeBody(port, {
      path: s.chat('/rooms/r1/messages', 'v2'),
      headers: { ...json, ...bearer(as('ann')) },
      size: TWELVE_MB,
      chunked,
    });
    readWhole(answer);
    expect(answer.status).toBe(413);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json).toEqual({
      error: 'services/chatkit/payload_too_large/body_too_large',
      error_description: expect.stringContaining('1048576 bytes'),
    });
    // Nothing was sent.
    expect((await s.request('GET', s.chat('/rooms/r1/messages'), { token: as('ann') })).body).toEqual([]);
  });

  it('POST /publishes/interests with 12 MB: Beams\' 400 body_too_large in its {error, description} shape', async () => {
    const answer = await sendWholeBody(port, {
      path: `/publish_api/v1/instances/${s.instanceId}/publishes/interests`,
      headers: { ...json, ...bearer(s.secret) },
      size: TWELVE_MB,
    });
    readWhole(answer);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'bad_request/body_too_large', description: expect.any(String) });
  });

  it('POST /publishes/users chunked with 12 MB: 400 body_too_large', async () => {
    const answer = await sendWholeBody(port, {
      path: `/publish_api/v1/instances/${s.instanceId}/publishes/users`,
      headers: { ...json, ...bearer(s.secret) },
      size: TWELVE_MB,
      chunked: true,
    });
    readWhole(answer);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'bad_request/body_too_large', description: expect.any(String) });
  });

  it('registering a device with 12 MB: 400 body_too_large, Beams-shaped', async () => {
    const answer = await sendWholeBody(port, { path: `/device_api/v1/instances/${s.instanceId}/devices/web`, headers: json, size: TWELVE_MB });
    readWhole(answer);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'bad_request/body_too_large', description: expect.any(String) });
  });

  it('an attachment upload of 12 MB streamed past its announced length: 400 wrong_content_length', async () => {
    const created = await s.request('POST', s.chat('/rooms/r1/attachments'), { body: { content_type: 'text/plain', content_length: 10 }, token: as('ann') });
    expect(created.status).toBe(201);
    const link = new URL(created.body.upload_url);
    const answer = await sendWholeBody(port, {
      method: 'PUT',
      path: link.pathname + link.search,
      headers: { 'content-type': 'text/plain' },
      size: TWELVE_MB,
      chunked: true,
    });
    readWhole(answer);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('bad_request/wrong_content_length');
  });

  it('a files API upload of 12 MB: 400 file_too_large', async () => {
    const boundary = 'parley-boundary-7d1e';
    const answer = await sendWholeBody(port, {
      path: `/services/chatkit_files/v1/${s.instanceId}/rooms/r1/users/ann/files/big.bin`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...bearer(as('ann')) },
      size: TWELVE_MB,
      before: `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
      after: `\r\n--${boundary}--\r\n`,
    });
    readWhole(answer);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('services/chatkit_files/bad_request/file_too_large');
  });

  it('a body announced past the drain limit is answered at once, without waiting for it, and its connection closed', async () => {
    // Headers only: the body never comes, and nothing waits for it.
    const answer = await exchange(
      port,
      `POST ${s.chat('/rooms/r1/messages', 'v2')} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `authorization: Bearer ${as('ann')}\r\ncontent-length: ${UNREAD_BODY_DRAIN_LIMIT_BYTES + 1}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('payload_too_large/body_too_large');
  });

  it('serves the next request on the same connection after a body refused before it was read, once it has all arrived', async () => {
    const body = 'x'.repeat(2 * 1024 * 1024);
    // Refused on its headers (the publish API wants application/json), then a second request behind it.
    const answers = await exchange(
      port,
      `POST /publish_api/v1/instances/${s.instanceId}/publishes/interests HTTP/1.1\r\nhost: x\r\n` +
        `content-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      'GET /health/live HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
    );
    expect(answers).toMatch(/^HTTP\/1\.1 400 [^]*"bad_request\/invalid_content_type"/);
    expect(answers).toMatch(/HTTP\/1\.1 200 [^]*\{"status":"alive"\}$/);
  });
});

describe('a refused body still arriving when the server shuts down', () => {
  it('does not hold the drain: the client gets its answer and the connection closes', async () => {
    const s = await startTestServer();
    const received = new Promise<void>((resolve) => s.server.app.getHttpServer().once('request', () => resolve()));
    const socket = connect(s.server.httpPort, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // 12 MB announced, 1 MB sent, then the client stalls: the refusal waits for the rest.
    socket.write(
      `POST ${s.chat('/users')} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `authorization: Bearer ${s.token({ su: true })}\r\ncontent-length: ${TWELVE_MB}\r\n\r\n` +
        'x'.repeat(1024 * 1024),
    );
    await received;
    await s.close();
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain('payload_too_large/body_too_large');
  });
});
