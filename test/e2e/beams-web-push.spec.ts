/**
 * Beams Web Push delivery end to end: devices registered through the device API (raw HTTP,
 * as push-notifications-web calls it) with subscriptions whose endpoints are a local HTTPS
 * push service this test runs and whose keys it generated; a publish through the unmodified
 * server SDK; the push service receives the encrypted POST and the test decrypts it
 * (aes128gcm, RFC 8291) with node:crypto. Needs NODE_EXTRA_CA_CERTS=test/.certs/localhost.pem
 * (as `npm test` sets it): web-push speaks only HTTPS.
 */
import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { createDecipheriv, createECDH, createPublicKey, ECDH, hkdfSync, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { CERT_FILE, KEY_FILE, startTestServer, TestServer } from '../support/test-server';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { jsonCall } from '../support/json-call';
import { eventually } from '../support/waiting';

interface Received {
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  readonly status: number;
}

/** A browser's side of a subscription: the keys it would generate, and its endpoint path on the local push service. */
interface Browser {
  readonly ecdh: ECDH;
  readonly auth: Buffer;
  readonly path: string;
}

/** The local push service is the only host devices may name (the default allows only the public push services). */
const PUSH_HOSTS = { BEAMS_WEB_PUSH_HOSTS: 'localhost' };

const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, length: number) => Buffer.from(hkdfSync('sha256', ikm, salt, info, length));

/** RFC 8291 / RFC 8188 decryption of a single-record aes128gcm Web Push message body. */
function decrypt(browser: Browser, body: Buffer): string {
  const salt = body.subarray(0, 16);
  const idLength = body.readUInt8(20);
  const serverPublicKey = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  const secret = browser.ecdh.computeSecret(serverPublicKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.ecdh.getPublicKey(), serverPublicKey]);
  const ikm = hkdf(browser.auth, secret, keyInfo, 32);
  const cek = hkdf(salt, ikm, Buffer.from('Content-Encoding: aes128gcm\0'), 16);
  const nonce = hkdf(salt, ikm, Buffer.from('Content-Encoding: nonce\0'), 12);
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (padded[end] === 0) end--;
  expect(padded[end]).toBe(2); // the last record's delimiter
  return padded.subarray(0, end).toString('utf8');
}

describe('Beams Web Push delivery', () => {
  let s: TestServer;
  let pushService: Server;
  let pushPort: number;
  const received: Received[] = [];
  /** Endpoint paths the push service answers 410 Gone for (an unsubscribed browser), and how many more times 503 for (it is failing). */
  const gone = new Set<string>();
  const failing = new Map<string, number>();

  const device = (path: string) => `/device_api/v1/instances/${s.instanceId}/devices/web${path}`;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => jsonCall(s.baseUrl, method, path, body, headers);
  const browser = (name: string): Browser => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    return { ecdh, auth: randomBytes(16), path: `/push/${name}` };
  };
  const register = async (b: Browser, interests: string[]): Promise<string> => {
    const subscription = {
      endpoint: `https://localhost:${pushPort}${b.path}`,
      expirationTime: null,
      keys: { p256dh: b.ecdh.getPublicKey().toString('base64url'), auth: b.auth.toString('base64url') },
    };
    const token = Buffer.from(JSON.stringify(subscription)).toString('base64');
    const registered = await call('POST', device(''), { token, metadata: { sdkVersion: '2.1.0' } });
    expect(registered).toEqual({ status: 200, json: { id: expect.stringMatching(/^web-/) } });
    const id = registered.json.id as string;
    expect((await call('PUT', device(`/${id}/interests`), { interests })).status).toBe(200);
    return id;
  };
  const beams = (instanceId = s.instanceId) => new PushNotifications({ instanceId, secretKey: s.secret, endpoint: '127.0.0.1', port: s.server.httpPort } as any);
  const publishEvents = (publishId: string, instanceId = s.instanceId) =>
    s.server.app.get<EventStore>(EVENT_STORE).readStream(`beamspublish-${instanceId}.${publishId}`, { fromRevision: 0 });
  // A generous correctness bound, not a timing assertion.
  const until = <T>(probe: () => Promise<T | undefined> | T | undefined) => eventually(probe, { timeoutMs: 20_000, everyMs: 50 });
  const delivered = (publishId: string, instanceId = s.instanceId) =>
    until(async () => (await publishEvents(publishId, instanceId)).find((e) => e.type === 'BeamsPublishDelivered')?.data as any);

  beforeAll(async () => {
    s = await startTestServer({ env: PUSH_HOSTS });
    pushService = createServer({ cert: readFileSync(CERT_FILE), key: readFileSync(KEY_FILE) }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const failures = failing.get(request.url!) ?? 0;
        if (failures > 0) failing.set(request.url!, failures - 1);
        const status = gone.has(request.url!) ? 410 : failures > 0 ? 503 : 201;
        received.push({ path: request.url!, headers: request.headers, body: Buffer.concat(chunks), status });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => pushService.listen(0, '127.0.0.1', resolve));
    pushPort = (pushService.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => pushService?.close(resolve));
    await s?.close();
  });

  it('delivers an encrypted, VAPID-signed push to the devices of the interest and to no other', async () => {
    const alice = browser('alice');
    const bob = browser('bob');
    const aliceId = await register(alice, ['donuts', 'news']);
    await register(bob, ['bagels']);
    expect(await call('GET', device(`/${aliceId}/interests`))).toEqual({
      status: 200,
      json: { interests: ['donuts', 'news'], responseMetadata: {} },
    });

    const web = { notification: { title: 'Hello', body: 'Donuts are here' }, data: { flavour: 'glazed' } };
    const { publishId } = await beams().publishToInterests(['donuts'], { web });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1, failed: 0, removed: 0 });

    expect(received.map((r) => r.path)).toEqual(['/push/alice']);
    const push = received[0];
    expect(push.headers['content-encoding']).toBe('aes128gcm');
    expect(Number(push.headers.ttl)).toBeGreaterThan(0);
    // VAPID (RFC 8292): an ES256 JWT for the endpoint's origin, signed by the key the device API hands browsers.
    const { json: vapid } = await call('GET', `/device_api/v1/instances/${s.instanceId}/web-vapid-public-key`);
    const m = /^vapid t=([^,]+), k=(.+)$/.exec(String(push.headers.authorization));
    expect(m?.[2]).toBe(vapid.vapidPublicKey);
    const [header, claims, signature] = m![1].split('.');
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toMatchObject({ aud: `https://localhost:${pushPort}` });
    const publicKey = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: Buffer.from(vapid.vapidPublicKey, 'base64url').subarray(1, 33).toString('base64url'), y: Buffer.from(vapid.vapidPublicKey, 'base64url').subarray(33).toString('base64url') },
      format: 'jwk',
    });
    expect(verify('sha256', Buffer.from(`${header}.${claims}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(true);

    expect(JSON.parse(decrypt(alice, push.body))).toEqual({
      ...web,
      data: { flavour: 'glazed', pusher: { instanceId: s.instanceId, publishId, hasDisplayableContent: true, hasData: true } },
    });
  });

  it('removes a device whose push service answers 410 Gone, and pushes nothing to it afterwards', async () => {
    const carol = browser('carol');
    const carolId = await register(carol, ['gone-test']);
    gone.add(carol.path);
    const first = await beams().publishToInterests(['gone-test'], { web: { notification: { title: 'One' } } });
    expect(await delivered(first.publishId)).toMatchObject({ devices: 1, delivered: 0, removed: 1 });
    expect(await call('GET', device(`/${carolId}/interests`))).toMatchObject({ status: 404, json: { error: 'not_found/device_not_found' } });

    const before = received.filter((r) => r.path === carol.path).length;
    const second = await beams().publishToInterests(['gone-test'], { web: { notification: { title: 'Two' } } });
    expect(await delivered(second.publishId)).toMatchObject({ devices: 0 });
    expect(received.filter((r) => r.path === carol.path)).toHaveLength(before);
  });

  it('retries, with backoff, a push the push service refused with 503', async () => {
    const frank = browser('frank');
    await register(frank, ['retry-test']);
    failing.set(frank.path, 1);
    const { publishId } = await beams().publishToInterests(['retry-test'], { web: { notification: { title: 'Again' } } });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1, failed: 0 });
    expect(received.filter((r) => r.path === frank.path).map((r) => r.status)).toEqual([503, 201]);
  });

  /**
   * Runs `body` on servers of its own (started into `s`) over a data directory that outlives each
   * of them (the shared server's is removed on close); the shared server is put back after.
   */
  const withOwnDataDir = async (prefix: string, body: (dataDir: string) => Promise<void>) => {
    const dataDir = mkdtempSync(join(tmpdir(), prefix));
    const shared = s;
    try {
      await body(dataDir);
    } finally {
      if (s !== shared) await s.close();
      s = shared;
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  it('delivers after a restart a publish accepted, and refused by the push service, before the stop', async () => {
    await withOwnDataDir('parley-beams-restart-', async (dataDir) => {
      s = await startTestServer({ dataDir, env: PUSH_HOSTS });
      const erin = browser('erin');
      await register(erin, ['restart-test']);
      failing.set(erin.path, Infinity);
      const web = { notification: { title: 'Still here' } };
      const { publishId } = await beams().publishToInterests(['restart-test'], { web });
      await until(() => received.find((r) => r.path === erin.path)); // tried, refused with 503
      const instanceId = s.instanceId;
      await s.close();

      failing.set(erin.path, 0);
      s = await startTestServer({ dataDir, env: PUSH_HOSTS });
      const push = await until(() => received.find((r) => r.path === erin.path && r.status === 201));
      expect(JSON.parse(decrypt(erin, push.body))).toMatchObject({ ...web, data: { pusher: { instanceId, publishId } } });
      expect(await delivered(publishId, instanceId)).toMatchObject({ devices: 1, delivered: 1 });
    });
  });

  it('pushes nothing to a device registered before BEAMS_WEB_PUSH_HOSTS was narrowed to leave its host out', async () => {
    await withOwnDataDir('parley-beams-narrowed-', async (dataDir) => {
      s = await startTestServer({ dataDir, env: PUSH_HOSTS });
      const ivan = browser('ivan');
      await register(ivan, ['narrowed-test']);
      const instanceId = s.instanceId;
      await s.close();

      s = await startTestServer({ dataDir, env: { BEAMS_WEB_PUSH_HOSTS: 'fcm.googleapis.com' } });
      const { publishId } = await beams(instanceId).publishToInterests(['narrowed-test'], { web: { notification: { title: 'Not to you' } } });
      expect(await delivered(publishId, instanceId)).toMatchObject({ devices: 1, delivered: 0, failed: 1, removed: 0 });
      expect(received.filter((r) => r.path === ivan.path)).toEqual([]);
    });
  });

  it('adds and removes single interests, and refuses bad tokens, interests and unknown devices with Beams errors', async () => {
    const dave = browser('dave');
    const daveId = await register(dave, []);
    expect((await call('POST', device(`/${daveId}/interests/pastries`))).status).toBe(200);
    expect((await call('POST', device(`/${daveId}/interests/cakes`))).status).toBe(200);
    expect((await call('DELETE', device(`/${daveId}/interests/pastries`))).status).toBe(200);
    expect((await call('GET', device(`/${daveId}/interests`))).json.interests).toEqual(['cakes']);
    expect((await call('PUT', device(`/${daveId}/metadata`), { sdkVersion: '2.1.1' })).status).toBe(200);

    const bad = (answer: { status: number; json: any }, status: number, error: string) =>
      expect(answer).toEqual({ status, json: { error, description: expect.any(String) } });
    bad(await call('POST', device(''), { token: 'not base64 json' }), 400, 'bad_request/invalid_token');
    const httpToken = Buffer.from(JSON.stringify({ endpoint: 'http://localhost/x', keys: { p256dh: 'AA', auth: 'AA' } })).toString('base64');
    bad(await call('POST', device(''), { token: httpToken }), 400, 'bad_request/invalid_token');
    // An endpoint at a host outside BEAMS_WEB_PUSH_HOSTS (here an address inside the network) is refused and never stored.
    const registrations = async () =>
      (await s.server.app.get<EventStore>(EVENT_STORE).readAll({ filter: { eventTypes: ['BeamsDeviceRegistered'] } })).length;
    const before = await registrations();
    for (const endpoint of [`https://127.0.0.1:${pushPort}/push/dave`, `https://evil-localhost:${pushPort}/x`, 'https://metadata.internal/latest']) {
      const token = Buffer.from(JSON.stringify({ endpoint, keys: { p256dh: 'AA', auth: 'AA' } })).toString('base64');
      bad(await call('POST', device(''), { token }), 400, 'bad_request/push_service_not_allowed');
    }
    expect(await registrations()).toBe(before);
    bad(await call('PUT', device(`/${daveId}/interests`), { interests: ['no spaces'] }), 400, 'bad_request/invalid_interest');
    bad(await call('PUT', device(`/${daveId}/interests`), { interests: 'cakes' }), 400, 'bad_request/invalid_interests');
    bad(await call('GET', device('/web-00000000-0000-0000-0000-000000000000/interests')), 404, 'not_found/device_not_found');
    bad(await call('GET', `/device_api/v1/instances/no-such-instance/web-vapid-public-key`), 404, 'not_found/instance_not_found');

    expect((await call('DELETE', device(`/${daveId}`))).status).toBe(200);
    bad(await call('GET', device(`/${daveId}/interests`)), 404, 'not_found/device_not_found');
    expect((await call('DELETE', device(`/${daveId}`))).status).toBe(200);
  });

  it('delivers publishes to users to the devices associated through a Beams token, and none after deleteUser', async () => {
    const grace = browser('grace');
    const heidi = browser('heidi');
    const graceId = await register(grace, ['user-test']);
    const heidiId = await register(heidi, []);
    const associate = (id: string, token: string) => call('PUT', device(`/${id}/user`), undefined, { authorization: `Bearer ${token}` });
    expect(await associate(graceId, beams().generateToken('grace').token)).toEqual({ status: 200, json: {} });
    expect((await associate(graceId, beams().generateToken('grace').token)).status).toBe(200); // the SDK may repeat it
    expect((await associate(heidiId, beams().generateToken('heidi').token)).status).toBe(200);

    const web = { notification: { title: 'For Grace' } };
    const { publishId } = await beams().publishToUsers(['grace'], { web });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1 });
    const pushes = received.filter((r) => r.path === grace.path);
    expect(pushes).toHaveLength(1);
    expect(JSON.parse(decrypt(grace, pushes[0].body))).toMatchObject({ ...web, data: { pusher: { instanceId: s.instanceId, publishId } } });
    expect(received.filter((r) => r.path === heidi.path)).toEqual([]);

    await beams().deleteUser('grace');
    const after = await beams().publishToUsers(['grace'], { web });
    expect(await delivered(after.publishId)).toMatchObject({ devices: 0 });
    const byInterest = await beams().publishToInterests(['user-test'], { web });
    expect(await delivered(byInterest.publishId)).toMatchObject({ devices: 0 });
    expect(received.filter((r) => r.path === grace.path)).toHaveLength(1);
    // Heidi's device is still hers.
    const toHeidi = await beams().publishToUsers(['heidi'], { web });
    expect(await delivered(toHeidi.publishId)).toMatchObject({ devices: 1, delivered: 1 });
  });

  it('refuses a missing, wrongly signed, expired or foreign Beams token, and a device of another user', async () => {
    const ivan = browser('ivan');
    const ivanId = await register(ivan, []);
    const associate = (token: string | null, id = ivanId) =>
      call('PUT', device(`/${id}/user`), undefined, token === null ? {} : { authorization: `Bearer ${token}` });
    const refused = (answer: { status: number; json: any }, status: number, error: string) =>
      expect(answer).toEqual({ status, json: { error, description: expect.any(String) } });
    const issuer = `https://${s.instanceId}.pushnotifications.pusher.com`;
    const now = Math.floor(Date.now() / 1000);

    refused(await associate(null), 401, 'unauthorized/invalid_token');
    refused(await associate('not-a-jwt'), 401, 'unauthorized/invalid_token');
    refused(await associate(jwt.sign({}, 'another secret', { expiresIn: '24h', issuer, subject: 'ivan' })), 401, 'unauthorized/invalid_token');
    refused(await associate(jwt.sign({ iat: now - 2 * 86400, exp: now - 86400 }, s.secret, { issuer, subject: 'ivan' })), 401, 'unauthorized/invalid_token');
    refused(await associate(jwt.sign({}, s.secret, { issuer, subject: 'ivan' })), 401, 'unauthorized/invalid_token'); // no expiry
    const otherInstance = 'https://other.pushnotifications.pusher.com';
    refused(await associate(jwt.sign({}, s.secret, { expiresIn: '24h', issuer: otherInstance, subject: 'ivan' })), 401, 'unauthorized/invalid_token');

    expect((await associate(beams().generateToken('ivan').token)).status).toBe(200);
    refused(await associate(beams().generateToken('judy').token), 403, 'forbidden/device_has_other_user');
    refused(await associate(beams().generateToken('ivan').token, 'web-00000000-0000-0000-0000-000000000000'), 404, 'not_found/device_not_found');
  });

  it('issues, through chatkit_beams_token_provider, a Beams token for the Chatkit user of the access token only', async () => {
    const kim = browser('kim');
    const kimId = await register(kim, []);
    const provider = (userId: string) => `/services/chatkit_beams_token_provider/v1/${s.instanceId}/beams-tokens?user_id=${encodeURIComponent(userId)}`;
    const issued = await s.request('GET', provider('kim'), { token: s.token({ sub: 'kim' }) });
    expect(issued).toMatchObject({ status: 200, body: { token: expect.any(String) } });
    const claims = jwt.decode(issued.body.token) as jwt.JwtPayload;
    expect(claims).toMatchObject({ sub: 'kim', iss: `https://${s.instanceId}.pushnotifications.pusher.com` });
    expect(claims.exp! - claims.iat!).toBe(24 * 3600);

    expect((await call('PUT', device(`/${kimId}/user`), undefined, { authorization: `Bearer ${issued.body.token}` })).status).toBe(200);
    const { publishId } = await beams().publishToUsers(['kim'], { web: { notification: { title: 'Hi Kim' } } });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1 });

    expect(await s.request('GET', provider('lee'), { token: s.token({ sub: 'kim' }) })).toMatchObject({
      status: 403,
      body: { error: expect.stringMatching(/other_user$/), error_description: expect.any(String) },
    });
    expect((await s.request('GET', provider('kim'), { token: null })).status).toBe(401);
  });
});
