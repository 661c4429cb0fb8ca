import jwt from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer, TestResponse } from '../support/test-server';
import { rawRequest } from '../support/raw-request';
import { eventually } from '../support/waiting';
import { openHttpSubscription } from '../support/subscribe-client';

/** Every file under the data directory's blob store. */
const blobFiles = (dataDir: string): string[] => (readdirSync(join(dataDir, 'blobs'), { recursive: true }) as string[]).filter((name) => statSync(join(dataDir, 'blobs', name)).isFile());

/**
 * `Idempotency-Key` on the writes of every API family (docs/idempotency.md): a retry with the
 * same key and request is answered as the first time, marked `Idempotent-Replayed: true`, and
 * changes nothing again.
 */
describe('idempotent writes (Idempotency-Key)', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const keyed = (key: string, headers: Record<string, string> = {}) => ({ 'idempotency-key': key, ...headers });
  const send = (key: string | undefined, text: string, token = as('ann'), room = 'lobby') =>
    s.request('POST', s.chat(`/rooms/${room}/messages`), {
      body: { parts: [{ type: 'text/plain', content: text }] },
      token,
      headers: key === undefined ? {} : keyed(key),
    });
  const messages = async (room = 'lobby') => (await s.request('GET', s.chat(`/rooms/${room}/messages?limit=100`), { token: as('ann') })).body as { id: number; parts: { content: string }[] }[];
  const replayed = (res: TestResponse) => res.headers.get('idempotent-replayed');

  beforeAll(async () => {
    s = await startTestServer();
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben'].map((id) => ({ id, name: id })) } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'Lobby', user_ids: ['ben'] }, token: as('ann') })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('answers a send retried with the same key with the same message_id, and the room holds one message', async () => {
    const key = randomUUID();
    const first = await send(key, 'once');
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    const retry = await send(key, 'once');
    expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({ status: 201, body: first.body, replayed: 'true' });
    expect((await messages()).filter((m) => m.parts[0].content === 'once').map((m) => m.id)).toEqual([first.body.message_id]);
  });

  it('refuses the same key with another body (422) and changes nothing', async () => {
    const key = randomUUID();
    const first = await send(key, 'original');
    const other = await send(key, 'changed');
    expect({ status: other.status, body: other.body }).toEqual({
      status: 422,
      body: { error: 'services/chatkit/unprocessable_entity/idempotency_key_reused', error_description: expect.stringContaining('another request') },
    });
    expect((await messages()).filter((m) => m.parts[0].content === 'changed')).toEqual([]);
    // The first request's retry is still answered.
    expect((await send(key, 'original')).body).toEqual(first.body);
  });

  it('refuses a key over 255 characters, or not visible ASCII, with 400 and changes nothing', async () => {
    const tooLong = await send('k'.repeat(256), 'too long');
    expect({ status: tooLong.status, error: tooLong.body.error }).toEqual({ status: 400, error: 'services/chatkit/bad_request/invalid_idempotency_key' });
    const spaced = await send('has space', 'spaced');
    expect(spaced.status).toBe(400);
    expect((await send('k'.repeat(255), 'longest')).status).toBe(201);
    expect((await messages()).filter((m) => ['too long', 'spaced'].includes(m.parts[0].content))).toEqual([]);
  });

  it('makes one change for concurrent duplicates: the others are answered 409 in flight (Retry-After) or with the replay', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(key, 'concurrent')));
    const sent = (await messages()).filter((m) => m.parts[0].content === 'concurrent');
    expect(sent).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) {
        expect(answer.body.error).toBe('services/chatkit/conflict/idempotency_key_in_flight');
        expect(answer.headers.get('retry-after')).toBe('1');
      } else {
        expect({ status: answer.status, body: answer.body }).toEqual({ status: 201, body: { message_id: sent[0].id } });
      }
    }
    expect(answers.filter((a) => a.status === 201 && replayed(a) === null)).toHaveLength(1);
    // Once the first is answered, every retry gets its answer.
    expect((await send(key, 'concurrent')).body).toEqual({ message_id: sent[0].id });
  });

  it('scopes a key to the token subject and the route: the same key from another user, or on another route, is another request', async () => {
    const key = randomUUID();
    const ann = await send(key, 'from ann');
    const ben = await send(key, 'from ben', as('ben'));
    expect(ben.status).toBe(201);
    expect(replayed(ben)).toBeNull();
    expect(ben.body.message_id).not.toBe(ann.body.message_id);
    const cursor = await s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/lobby/users/ann`, {
      body: { position: ann.body.message_id },
      token: as('ann'),
      headers: keyed(key),
    });
    expect({ status: cursor.status, replayed: replayed(cursor) }).toEqual({ status: 201, replayed: null });
  });

  it("gives a stranger's token nothing: no answer, no replay", async () => {
    const key = randomUUID();
    await send(key, 'private');
    const forged = jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, sub: 'ann' }, 'not-the-secret', { algorithm: 'HS256', expiresIn: 60 });
    const stranger = await send(key, 'private', forged);
    expect(stranger.status).toBe(401);
    expect(stranger.text).not.toContain('message_id');
  });

  it('names each request in flight by an id of its own, even when clients send the same X-Request-Id (the key record follows the request id)', async () => {
    const stream = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby')}`, { authorization: `Bearer ${as('ann')}`, 'x-request-id': 'shared-id' });
    try {
      expect(stream.headers.get('x-request-id')).toBe('shared-id');
      const key = randomUUID();
      const named = await s.request('POST', s.chat('/rooms/lobby/messages'), {
        body: { parts: [{ type: 'text/plain', content: 'named' }] },
        token: as('ann'),
        headers: keyed(key, { 'x-request-id': 'shared-id' }),
      });
      expect(named.status).toBe(201);
      expect(named.headers.get('x-request-id')).not.toBe('shared-id');
      expect((await send(key, 'named')).body).toEqual(named.body);
    } finally {
      await stream.close();
    }
    // Once the stream is over, the id is the client's again.
    await eventually(async () => (await s.request('GET', s.chat('/rooms/lobby'), { token: as('ann'), headers: { 'x-request-id': 'shared-id' } })).headers.get('x-request-id') === 'shared-id', {
      what: 'the stream ended and its id was free again',
    });
  });

  it('runs a request without a key as before: no record, no header', async () => {
    const a = await send(undefined, 'plain');
    const b = await send(undefined, 'plain');
    expect(replayed(a)).toBeNull();
    expect(replayed(b)).toBeNull();
    expect(b.body.message_id).toBeGreaterThan(a.body.message_id);
  });

  it('answers a change that was answered 4xx again by running it: nothing was stored', async () => {
    const key = randomUUID();
    const missing = await send(key, 'to nowhere', as('ann'), 'no-such-room');
    expect(missing.status).toBe(404);
    expect((await send(key, 'to nowhere', as('ann'), 'no-such-room')).status).toBe(404);
  });

  describe('every API family', () => {
    it('chat: a user created and a room updated once', async () => {
      const key = randomUUID();
      const create = () => s.request('POST', s.chat('/users'), { body: { id: 'cat', name: 'Cat' }, headers: keyed(key) });
      const first = await create();
      const retry = await create();
      expect(first.status).toBe(201);
      expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({ status: 201, body: first.body, replayed: 'true' });
      // Without a key, the same create is refused: the user exists.
      expect((await s.request('POST', s.chat('/users'), { body: { id: 'cat', name: 'Cat' } })).status).toBe(400);

      const updateKey = randomUUID();
      const update = () => s.request('PUT', s.chat('/rooms/lobby'), { body: { name: 'Renamed' }, headers: keyed(updateKey) });
      expect((await update()).status).toBe(204);
      const again = await update();
      expect({ status: again.status, replayed: replayed(again) }).toEqual({ status: 204, replayed: 'true' });
    });

    it('roles: a role created once', async () => {
      const key = randomUUID();
      const create = () =>
        s.request('POST', `/services/chatkit_authorizer/v2/${s.instanceId}/roles`, { body: { name: 'mod', scope: 'global', permissions: ['message:create'] }, headers: keyed(key) });
      expect((await create()).status).toBe(201);
      const retry = await create();
      expect({ status: retry.status, replayed: replayed(retry) }).toEqual({ status: 201, replayed: 'true' });
      expect((await s.request('POST', `/services/chatkit_authorizer/v2/${s.instanceId}/roles`, { body: { name: 'mod', scope: 'global', permissions: ['message:create'] } })).status).toBe(409);

      // A route whose status tells whether it changed anything: the replay keeps the first's 201.
      expect((await s.request('POST', s.chat('/users'), { body: { id: 'moderator', name: 'M' } })).status).toBe(201);
      const assignKey = randomUUID();
      const assign = () => s.request('PUT', `/services/chatkit_authorizer/v2/${s.instanceId}/users/moderator/roles`, { body: { name: 'mod' }, headers: keyed(assignKey) });
      expect((await assign()).status).toBe(201);
      const assignedAgain = await assign();
      expect({ status: assignedAgain.status, replayed: replayed(assignedAgain) }).toEqual({ status: 201, replayed: 'true' });
      expect((await s.request('PUT', `/services/chatkit_authorizer/v2/${s.instanceId}/users/moderator/roles`, { body: { name: 'mod' } })).status).toBe(200);
    });

    it('cursors: a cursor set once', async () => {
      const key = randomUUID();
      const put = () =>
        s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/lobby/users/ben`, { body: { position: 1 }, token: as('ben'), headers: keyed(key) });
      expect((await put()).status).toBe(201);
      const retry = await put();
      expect({ status: retry.status, replayed: replayed(retry) }).toEqual({ status: 201, replayed: 'true' });
    });

    it('files: a file uploaded once and deleted once (the delete retried is answered 204, not 404)', async () => {
      const files = (path: string) => `/services/chatkit_files/v1/${s.instanceId}${path}`;
      const boundary = 'b0undary';
      const form = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`);
      const uploadKey = randomUUID();
      const upload = () =>
        rawRequest(s.baseUrl, 'POST', files('/rooms/lobby/users/ann/files/a.txt'), form, {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          authorization: `Bearer ${as('ann')}`,
          'idempotency-key': uploadKey,
        });
      const uploaded = await upload();
      expect(uploaded.status).toBe(200);
      const blobs = blobFiles(s.dataDir).length;
      const again = await upload();
      expect({ status: again.status, json: again.json, replayed: again.headers.get('idempotent-replayed') }).toEqual({ status: 200, json: uploaded.json, replayed: 'true' });
      expect(blobFiles(s.dataDir)).toHaveLength(blobs); // no second copy of the bytes

      const key = randomUUID();
      const remove = () => s.request('DELETE', files('/rooms/lobby/files/a.txt'), { token: as('ann'), headers: keyed(key) });
      expect((await remove()).status).toBe(204);
      const retry = await remove();
      expect({ status: retry.status, replayed: replayed(retry) }).toEqual({ status: 204, replayed: 'true' });
      expect((await s.request('DELETE', files('/rooms/lobby/files/a.txt'), { token: as('ann') })).status).toBe(404);
    });

    it('scheduler: one delete job, the same job id', async () => {
      expect((await s.request('POST', s.chat('/users'), { body: { id: 'dan', name: 'Dan' } })).status).toBe(201);
      const key = randomUUID();
      const schedule = () => s.request('PUT', `/services/chatkit_scheduler/v1/${s.instanceId}/users/dan`, { headers: keyed(key) });
      const first = await schedule();
      expect(first.status).toBe(200);
      const retry = await schedule();
      expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({ status: 200, body: first.body, replayed: 'true' });
    });

    it('Beams publish: one publish, the same publishId', async () => {
      const key = randomUUID();
      const publish = () =>
        s.request('POST', `/publish_api/v1/instances/${s.instanceId}/publishes/interests`, {
          body: { interests: ['donuts'], web: { notification: { title: 'Hi' } } },
          token: null,
          headers: { authorization: `Bearer ${s.secret}`, ...keyed(key) },
        });
      const first = await publish();
      expect(first.status).toBe(200);
      const retry = await publish();
      expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({ status: 200, body: first.body, replayed: 'true' });
      const tooLong = await s.request('POST', `/publish_api/v1/instances/${s.instanceId}/publishes/interests`, {
        body: { interests: ['donuts'], web: { notification: { title: 'Hi' } } },
        token: null,
        headers: { authorization: `Bearer ${s.secret}`, 'idempotency-key': 'k'.repeat(256) },
      });
      // Beams' own error shape.
      expect({ status: tooLong.status, body: tooLong.body }).toEqual({ status: 400, body: { error: 'bad_request/invalid_idempotency_key', description: expect.any(String) } });
    });

    it('Feeds: one publish, the same item ids', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: now - 600, exp: now + 3000, feeds: { permission: { path: '*', action: '*' } } }, s.secret);
      const key = randomUUID();
      const publish = () => s.request('POST', `/services/feeds/v1/${s.instanceId}/feeds/news/items`, { body: { items: [{ hello: 'world' }] }, token, headers: keyed(key) });
      const first = await publish();
      expect(first.status).toBe(200);
      const retry = await publish();
      expect({ status: retry.status, body: retry.body, replayed: replayed(retry) }).toEqual({ status: 200, body: first.body, replayed: 'true' });
      const items = await s.request('GET', `/services/feeds/v1/${s.instanceId}/feeds/news/items`, { token: null });
      expect(items.body.items).toHaveLength(1);
    });
  });
});

describe('idempotency keys expire (IDEMPOTENCY_KEY_TTL_HOURS)', () => {
  let s: TestServer;
  // 0.002 h: 7.2 s, long enough for a retry right after the first on a busy machine.
  const TTL_HOURS = 0.002;
  beforeAll(async () => {
    s = await startTestServer({ env: { IDEMPOTENCY_KEY_TTL_HOURS: String(TTL_HOURS) } });
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'Lobby' }, token: s.token({ sub: 'ann' }) })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('runs a request again once its key expired', async () => {
    const key = randomUUID();
    const send = () =>
      s.request('POST', s.chat('/rooms/lobby/messages'), { body: { parts: [{ type: 'text/plain', content: 'again' }] }, token: s.token({ sub: 'ann' }), headers: { 'idempotency-key': key } });
    const first = await send();
    const expiresAt = Date.now() + TTL_HOURS * 3_600_000;
    expect((await send()).body).toEqual(first.body);
    await eventually(() => Date.now() > expiresAt, { what: 'the key expired', timeoutMs: 30_000, everyMs: 200 });
    const later = await send();
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.message_id).toBeGreaterThan(first.body.message_id);
  });
});
