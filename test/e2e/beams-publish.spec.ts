/**
 * The Beams publish API v1 and `deleteUser`: the seed's publish error table in its order of
 * precedence over raw HTTP, the 429 limit and recovery after it, and the unmodified
 * `@pusher/push-notifications-server` 1.2.7 against a real server on SQLite.
 */
import PushNotifications from '@pusher/push-notifications-server';
import { Agent, request as httpRequest } from 'node:http';
import { startTestServer, TestServer } from '../support/test-server';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { eventually, sleep } from '../support/waiting';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** A raw HTTP call with exact headers and bytes (fetch would add or fix some). */
const call = (port: number, method: string, path: string, headers: Record<string, string>, body?: string | Buffer, agent?: Agent): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });

/** Publishes the 429 test keeps in flight at once (enough for the server's group commit to fill). */
const IN_FLIGHT = 200;

const payload = { web: { notification: { title: 'Hello', body: 'World' } } };

describe('Beams publish API', () => {
  let s: TestServer;
  let port: number;
  const interestsPath = () => `/publish_api/v1/instances/${s.instanceId}/publishes/interests`;
  const usersPath = () => `/publish_api/v1/instances/${s.instanceId}/publishes/users`;
  const json = (secret = s.secret) => ({ 'content-type': 'application/json', authorization: `Bearer ${secret}` });
  const beams = (secretKey = s.secret, instanceId = s.instanceId) =>
    new PushNotifications({ instanceId, secretKey, endpoint: '127.0.0.1', port } as any);

  beforeAll(async () => {
    s = await startTestServer();
    port = s.server.httpPort;
  });
  afterAll(async () => {
    await s?.close();
  });

  const expectBeamsError = (answer: Answer, status: number, error: RegExp) => {
    expect({ status: answer.status, error: answer.json?.error }).toEqual({ status, error: expect.stringMatching(error) });
    expect(answer.json).toEqual({ error: expect.any(String), description: expect.any(String) });
    expect(answer.json.description.length).toBeGreaterThan(0);
  };

  describe('the error table over raw HTTP, in order of precedence', () => {
    const tooBig = JSON.stringify({ interests: ['a'], ...payload, pad: 'x'.repeat(11 * 1024) });

    it('400 for a content type other than application/json, before anything else', async () => {
      const a = await call(port, 'POST', `/publish_api/v1/instances//publishes/interests`, { 'content-type': 'text/plain' }, tooBig);
      expectBeamsError(a, 400, /invalid_content_type/);
      const none = await call(port, 'POST', interestsPath(), { authorization: `Bearer ${s.secret}` }, JSON.stringify({ interests: ['a'], ...payload }));
      expectBeamsError(none, 400, /invalid_content_type/);
    });

    it('400 when the instance id is missing, before the Authorization header', async () => {
      for (const kind of ['interests', 'users']) {
        const a = await call(port, 'POST', `/publish_api/v1/instances//publishes/${kind}`, { 'content-type': 'application/json' }, tooBig);
        expectBeamsError(a, 400, /missing_instance_id/);
      }
      const del = await call(port, 'DELETE', `/user_api/v1/instances//users/alice`, {});
      expectBeamsError(del, 400, /missing_instance_id/);
    });

    it('400 when Authorization is missing, before the body size', async () => {
      const a = await call(port, 'POST', interestsPath(), { 'content-type': 'application/json' }, tooBig);
      expectBeamsError(a, 400, /missing_authorization/);
      const del = await call(port, 'DELETE', `/user_api/v1/instances/${s.instanceId}/users/alice`, {});
      expectBeamsError(del, 400, /missing_authorization/);
    });

    it('400 for a body over 10 KiB (interests) or 200 KiB (users), before its syntax and the key', async () => {
      expectBeamsError(await call(port, 'POST', interestsPath(), json('wrong'), tooBig + '{'), 400, /body_too_large/);
      const users = Array.from({ length: 1000 }, (_, i) => `user-${i}-${'u'.repeat(150)}`);
      const bigUsers = JSON.stringify({ users, ...payload });
      expect(bigUsers.length).toBeGreaterThan(150 * 1024); // over 10 KiB, under 200 KiB: accepted by size
      expect(bigUsers.length).toBeLessThan(200 * 1024);
      const accepted = await call(port, 'POST', usersPath(), json(), bigUsers);
      expect(accepted.status).toBe(200);
      const overUsers = JSON.stringify({ users: ['a'], ...payload, pad: 'x'.repeat(201 * 1024) });
      expectBeamsError(await call(port, 'POST', usersPath(), json('wrong'), overUsers), 400, /body_too_large/);
    });

    it('400 for a body that is not a JSON object, before the key', async () => {
      for (const body of ['{"interests": [', '[1,2]', '"text"', '42', '']) {
        expectBeamsError(await call(port, 'POST', interestsPath(), json('wrong'), body), 400, /invalid_json|invalid_body/);
      }
    });

    it('401 for an incorrect key, 404 for an unknown instance, before the schema', async () => {
      expectBeamsError(await call(port, 'POST', interestsPath(), json('wrong'), '{}'), 401, /incorrect_key/);
      expectBeamsError(await call(port, 'POST', usersPath(), json(s.secret + 'x'), '{}'), 401, /incorrect_key/);
      expectBeamsError(
        await call(port, 'DELETE', `/user_api/v1/instances/${s.instanceId}/users/alice`, { authorization: 'Bearer nope' }),
        401,
        /incorrect_key/,
      );
      expectBeamsError(await call(port, 'POST', `/publish_api/v1/instances/no-such-instance/publishes/interests`, json(), '{}'), 404, /instance_not_found/);
    });

    it('422 for a body that does not match the schema', async () => {
      const bad: [string, object][] = [
        [interestsPath(), { ...payload }],
        [interestsPath(), { interests: [], ...payload }],
        [interestsPath(), { interests: Array.from({ length: 101 }, (_, i) => `i${i}`), ...payload }],
        [interestsPath(), { interests: ['a'.repeat(165)], ...payload }],
        [interestsPath(), { interests: ['has space'], ...payload }],
        [interestsPath(), { interests: [''], ...payload }],
        [interestsPath(), { interests: [7], ...payload }],
        [interestsPath(), { interests: ['a'] }],
        [interestsPath(), { interests: ['a'], web: 'not an object' }],
        [interestsPath(), { interests: ['a'], ...payload, webhookUrl: 'not a url' }],
        [usersPath(), { ...payload }],
        [usersPath(), { users: [], ...payload }],
        [usersPath(), { users: Array.from({ length: 1001 }, (_, i) => `u${i}`), ...payload }],
        [usersPath(), { users: ['é'.repeat(83)], ...payload }], // 166 bytes
        [usersPath(), { users: [''], ...payload }],
        [usersPath(), { users: ['alice'] }],
      ];
      for (const [path, body] of bad) expectBeamsError(await call(port, 'POST', path, json(), JSON.stringify(body)), 422, /schema_mismatch/);
      // The limits themselves pass.
      const edge = await call(
        port,
        'POST',
        interestsPath(),
        json(),
        JSON.stringify({ interests: ['A-z_0=9@,.;'.padEnd(164, 'x'), ...Array.from({ length: 99 }, (_, i) => `i${i}`)], apns: { aps: { alert: 'hi' } } }),
      );
      expect(edge.status).toBe(200);
      const multibyte = await call(port, 'POST', usersPath(), json(), JSON.stringify({ users: ['é'.repeat(82)], fcm: { notification: { title: 't' } } }));
      expect(multibyte.status).toBe(200);
    });

    it('accepts application/json with a charset and answers a unique publishId each time', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const a = await call(port, 'POST', usersPath(), { ...json(), 'content-type': 'application/json; charset=utf-8' }, JSON.stringify({ users: ['alice'], ...payload }));
        expect(a.status).toBe(200);
        expect(a.json).toEqual({ publishId: expect.any(String) });
        ids.add(a.json.publishId);
      }
      expect(ids.size).toBe(5);
    });
  });

  describe('429: more than 100 publishes to interests per second', () => {
    it('refuses the excess with Retry-After, leaves users unlimited, and accepts again after waiting', async () => {
      const body = JSON.stringify({ interests: ['rate'], ...payload });
      // Publishes kept in flight on reused connections until the first 429. The bucket holds 100 and
      // refills 100 a second, so a server taking more than 100 a second empties it sooner or later;
      // a fixed burst of 400 that a busy machine spreads over 4 s never does.
      const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
      const answers: Answer[] = [];
      const deadline = Date.now() + 40_000; // a generous correctness bound, not a timing assertion
      const sender = async () => {
        while (!answers.some((a) => a.status !== 200) && Date.now() < deadline) {
          answers.push(await call(port, 'POST', interestsPath(), json(), body, agent));
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
      agent.destroy();
      const limited = answers.filter((a) => a.status === 429);
      // The full bucket lets the first 100 through, however slowly they come.
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(100);
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
      expect(limited.length).toBeGreaterThan(0);
      for (const a of limited) {
        expectBeamsError(a, 429, /publish_rate_exceeded/);
        expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // Publishing to users is not limited, even now.
      const users = await call(port, 'POST', usersPath(), json(), JSON.stringify({ users: ['alice'], ...payload }));
      expect(users.status).toBe(200);
      await sleep(Number(limited[0].headers['retry-after']) * 1000);
      const again = await call(port, 'POST', interestsPath(), json(), body);
      expect(again.status).toBe(200);
    }, 60_000);
  });

  describe('the unmodified @pusher/push-notifications-server 1.2.7', () => {
    it('publishToInterests and publishToUsers resolve {publishId}; deleteUser resolves', async () => {
      const client = beams();
      const interests = await client.publishToInterests(['donuts', 'hello-world'], {
        web: { notification: { title: 'Hi', body: 'donuts' } },
        webhookUrl: 'http://127.0.0.1:1/hook',
      } as any);
      expect(interests).toEqual({ publishId: expect.stringMatching(/^pubid-/) });
      const users = await client.publishToUsers(['alice', 'bob'], { fcm: { notification: { title: 'Hi', body: 'there' } } } as any);
      expect(users).toEqual({ publishId: expect.stringMatching(/^pubid-/) });
      expect(users.publishId).not.toBe(interests.publishId);
      await expect(client.deleteUser('alice')).resolves.toBeUndefined();
      await expect(client.deleteUser('user with spaces/and?odd#chars é')).resolves.toBeUndefined();
    });

    it('surfaces the server errors as "<status> <error> - <description>"', async () => {
      await expect(beams('wrong-secret').publishToInterests(['donuts'], payload as any)).rejects.toThrow(/^401 unauthorized\/incorrect_key - .+/);
      await expect(beams('wrong-secret').publishToUsers(['alice'], payload as any)).rejects.toThrow(/^401 unauthorized\/incorrect_key - .+/);
      await expect(beams('wrong-secret').deleteUser('alice')).rejects.toThrow(/^401 unauthorized\/incorrect_key - .+/);
      await expect(beams(s.secret, 'no-such-instance').publishToInterests(['donuts'], payload as any)).rejects.toThrow(/^404 not_found\/instance_not_found - .+/);
      await expect(beams().publishToInterests(['donuts'], {} as any)).rejects.toThrow(/^422 unprocessable_entity\/schema_mismatch - .+/);
      await expect(beams().publishToUsers(['alice'], { pad: 'x'.repeat(201 * 1024), ...payload } as any)).rejects.toThrow(
        /^400 bad_request\/body_too_large - .+/,
      );
    });
  });

  it('records publishes and user deletions as events, with the key id and never the secret; the notification reads as erased once delivered or its user deleted', async () => {
    const client = beams();
    const { publishId } = await client.publishToUsers(['carol'], payload as any);
    await client.deleteUser('carol');
    const events = s.server.app.get<EventStore>(EVENT_STORE);
    // Delivered (its key destroyed by the shred sweep's next pass, within about 2 s), or still
    // pending and named by the user's delete (destroyed with it, before it was answered).
    const published = await eventually(
      async () => {
        const stream = await events.readStream(`beamspublish-${s.instanceId}.${publishId}`, { fromRevision: 0 });
        return (stream[0].data as { erased?: boolean }).erased ? stream : undefined;
      },
      { timeoutMs: 20_000, everyMs: 50 },
    );
    // The accepting process starts delivery at once, so its record (no device here) may already follow.
    expect(published.map((e) => e.type)).toEqual(['BeamsPublishAccepted', 'BeamsPublishDelivered'].slice(0, Math.max(published.length, 1)));
    expect(published[0]).toMatchObject({
      type: 'BeamsPublishAccepted',
      data: { publish_id: publishId, target: { kind: 'users', users: ['carol'] }, request: {}, erased: true },
      metadata: { instance_id: s.instanceId, actor: { key_id: s.keyId } },
    });
    const deleted = await events.readStream(`beamsuser-${s.instanceId}.carol`, { fromRevision: 0 });
    expect(deleted.map((e) => e.type)).toEqual(['BeamsUserDeleted']);
    expect(deleted[0].data).toMatchObject({ user_id: 'carol', device_ids: [] });
    expect(JSON.stringify([published, deleted])).not.toContain(s.secret);
    expect(JSON.stringify(published)).not.toContain('World');
  });
});
