/**
 * Beams APNs and FCM delivery end to end: devices registered through the device API as the
 * iOS SDK (push-notifications-swift: `POST …/devices/apns` with `{token, bundleIdentifier,
 * metadata}`) and the Android SDK (push-notifications-android: `POST …/devices/fcm` with
 * `{token, knownPreviousClientIds, metadata}`, `PUT …/fcm/<id>/token`) call it; publishes through
 * the unmodified server SDK; a local HTTP/2 TLS "APNs" and a local "Google" (OAuth2 token
 * endpoint and FCM HTTP v1) that check each request as Apple and Google document it.
 * Needs NODE_EXTRA_CA_CERTS=test/.certs/localhost.pem (as `npm test` sets it).
 */
import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { generateKeyPairSync, KeyObject, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createSecureServer, Http2SecureServer, Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CERT_FILE, KEY_FILE, startTestServer, TestServer } from '../support/test-server';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { jsonCall } from '../support/json-call';
import { eventually } from '../support/waiting';

interface Received {
  readonly httpVersion: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

const TEAM_ID = 'TEAM123456';
const KEY_ID = 'KEY7654321';
const BUNDLE_ID = 'com.example.donuts';
const PROJECT_ID = 'parley-test';
const CLIENT_EMAIL = 'beams@parley-test.iam.gserviceaccount.com';

/** An HTTP/2 TLS server (HTTP/1.1 allowed too, as Google's token endpoint does) answering with `answer`. */
async function startEndpoint(received: Received[], answer: (r: Received) => { status: number; body?: unknown }): Promise<Http2SecureServer> {
  const server = createSecureServer({ cert: readFileSync(CERT_FILE), key: readFileSync(KEY_FILE), allowHTTP1: true }, (request: Http2ServerRequest, response: Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const r: Received = { httpVersion: request.httpVersion, method: request.method, path: request.url, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      const { status, body } = answer(r);
      response.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      if (body === undefined) response.end();
      else response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (server: Http2SecureServer) => (server.address() as AddressInfo).port;
const close = (server?: Http2SecureServer) => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));

describe('Beams APNs and FCM delivery', () => {
  let s: TestServer;
  let dir: string;
  let apnsService: Http2SecureServer;
  let google: Http2SecureServer;
  let apnsPublicKey: KeyObject;
  let googlePublicKey: KeyObject;
  const apnsReceived: Received[] = [];
  const googleReceived: Received[] = [];
  /** Per device token: the answers the push service gives next (then 200). */
  const scripted = new Map<string, { status: number; body?: unknown }[]>();
  let grants = 0;

  const next = (token: string) => scripted.get(token)?.shift() ?? { status: 200 };
  const apnsToken = () => randomBytes(32).toString('hex');
  const fcmToken = (name: string) => `${name}:APA91b${randomBytes(60).toString('base64url')}`;
  const devices = (platform: string, path = '') => `/device_api/v1/instances/${s.instanceId}/devices/${platform}${path}`;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => jsonCall(s.baseUrl, method, path, body, headers);
  const registerApns = async (token: string, interests: string[]) => {
    const registered = await call('POST', devices('apns'), { token, bundleIdentifier: BUNDLE_ID, metadata: { sdkVersion: '4.0.0', iosVersion: '17.0' } });
    expect(registered).toEqual({ status: 200, json: { id: expect.stringMatching(/^apns-/), initialInterestSet: [] } });
    const id = registered.json.id as string;
    expect((await call('PUT', devices('apns', `/${id}/interests`), { interests })).status).toBe(200);
    return id;
  };
  const registerFcm = async (token: string, interests: string[]) => {
    const registered = await call('POST', devices('fcm'), { token, knownPreviousClientIds: [], metadata: { sdkVersion: '1.9.0', androidVersion: '14' } });
    expect(registered).toEqual({ status: 200, json: { id: expect.stringMatching(/^fcm-/), initialInterestSet: [] } });
    const id = registered.json.id as string;
    for (const interest of interests) expect((await call('POST', devices('fcm', `/${id}/interests/${interest}`))).status).toBe(200);
    return id;
  };
  const beams = () => new PushNotifications({ instanceId: s.instanceId, secretKey: s.secret, endpoint: '127.0.0.1', port: s.server.httpPort } as any);
  const publishEvents = (publishId: string) =>
    s.server.app.get<EventStore>(EVENT_STORE).readStream(`beamspublish-${s.instanceId}.${publishId}`, { fromRevision: 0 });
  const delivered = (publishId: string) =>
    // A generous correctness bound, not a timing assertion.
    eventually(async () => (await publishEvents(publishId)).find((e) => e.type === 'BeamsPublishDelivered')?.data as Record<string, unknown> | undefined, {
      timeoutMs: 20_000,
      everyMs: 50,
    });
  const sends = (received: Received[], token: string) => received.filter((r) => r.path.endsWith(`/${token}`) || r.body.includes(`"token":"${token}"`));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-apns-fcm-'));
    const apnsKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    apnsPublicKey = apnsKeys.publicKey;
    writeFileSync(join(dir, 'AuthKey.p8'), apnsKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const googleKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    googlePublicKey = googleKeys.publicKey;

    apnsService = await startEndpoint(apnsReceived, (r) => next(r.path.split('/').pop()!));
    google = await startEndpoint(googleReceived, (r) => {
      if (r.path === '/token') return { status: 200, body: { access_token: `ya29.access-${++grants}`, expires_in: 3599, token_type: 'Bearer' } };
      return next((JSON.parse(r.body) as { message: { token: string } }).message.token);
    });
    writeFileSync(
      join(dir, 'service-account.json'),
      JSON.stringify({
        type: 'service_account',
        project_id: PROJECT_ID,
        private_key_id: 'k1',
        private_key: googleKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: CLIENT_EMAIL,
        token_uri: `https://localhost:${portOf(google)}/token`,
      }),
    );
    s = await startTestServer({
      env: {
        APNS_KEY_FILE: join(dir, 'AuthKey.p8'),
        APNS_KEY_ID: KEY_ID,
        APNS_TEAM_ID: TEAM_ID,
        APNS_HOST: `localhost:${portOf(apnsService)}`,
        FCM_SERVICE_ACCOUNT_FILE: join(dir, 'service-account.json'),
        FCM_HOST: `localhost:${portOf(google)}`,
      },
    });
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([close(apnsService), close(google)]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('pushes to APNs over HTTP/2 as Apple documents it, only to the devices of the interest, and keeps tokens out of the log', async () => {
    const donuts = apnsToken();
    const bagels = apnsToken();
    const id = await registerApns(donuts, ['donuts']);
    await registerApns(bagels, ['bagels']);
    expect(await call('GET', devices('apns', `/${id}/interests`))).toEqual({ status: 200, json: { interests: ['donuts'], responseMetadata: {} } });

    const apns = { aps: { alert: { title: 'Hello', body: 'Donuts are here' }, sound: 'default' }, data: { flavour: 'glazed' } };
    const before = Math.floor(Date.now() / 1000);
    const { publishId } = await beams().publishToInterests(['donuts'], { apns });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1, failed: 0, removed: 0 });

    expect(sends(apnsReceived, bagels)).toEqual([]);
    const [push] = sends(apnsReceived, donuts);
    expect(push).toMatchObject({ httpVersion: '2.0', method: 'POST', path: `/3/device/${donuts}` });
    expect(push.headers).toMatchObject({ 'apns-topic': BUNDLE_ID, 'apns-push-type': 'alert', 'apns-priority': '10', 'content-type': 'application/json' });
    expect(Number(push.headers['apns-expiration'])).toBeGreaterThan(before);
    expect(JSON.parse(push.body)).toEqual({ ...apns, data: { flavour: 'glazed', pusher: { publishId } } });
    // Token-based authentication: an ES256 JWT with the key id in its header, the team as issuer, and iat.
    const bearer = /^bearer (.+)$/.exec(String(push.headers.authorization))![1];
    const decoded = jwt.verify(bearer, apnsPublicKey, { algorithms: ['ES256'], complete: true });
    expect(decoded.header).toMatchObject({ alg: 'ES256', kid: KEY_ID });
    expect(decoded.payload).toEqual({ iss: TEAM_ID, iat: expect.any(Number) });
    expect(Math.abs((decoded.payload as { iat: number }).iat - before)).toBeLessThan(600);

    // The token is a push capability: sealed in the log, never plain.
    const log = JSON.stringify(await s.server.app.get<EventStore>(EVENT_STORE).readStream(`beamsdevice-${s.instanceId}.${id}`, { fromRevision: 0 }));
    expect(log).toContain('BeamsDeviceRegistered');
    expect(log).not.toContain(donuts);
  });

  it('pushes to FCM HTTP v1 with an access token from the service account, only to the user’s devices', async () => {
    const alice = fcmToken('alice');
    const bob = fcmToken('bob');
    const aliceId = await registerFcm(alice, []);
    const bobId = await registerFcm(bob, []);
    const associate = (deviceId: string, user: string) =>
      call('PUT', devices('fcm', `/${deviceId}/user`), undefined, { authorization: `Bearer ${beams().generateToken(user).token}` });
    expect((await associate(aliceId, 'alice')).status).toBe(200);
    expect((await associate(bobId, 'bob')).status).toBe(200);

    const fcm = { notification: { title: 'Hello', body: 'Donuts are here', icon: 'donut' }, data: { flavour: 'glazed', count: 3 } };
    const { publishId } = await beams().publishToUsers(['alice'], { fcm });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1, failed: 0, removed: 0 });

    // The OAuth2 JWT bearer grant, signed RS256 by the service account's key.
    const grant = googleReceived.find((r) => r.path === '/token')!;
    expect(grant.method).toBe('POST');
    expect(grant.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(grant.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = jwt.verify(form.get('assertion')!, googlePublicKey, { algorithms: ['RS256'] }) as Record<string, number | string>;
    expect(claims).toEqual({
      iss: CLIENT_EMAIL,
      scope: 'https://www.googleapis.com/auth/firebase.messaging',
      aud: `https://localhost:${portOf(google)}/token`,
      iat: expect.any(Number),
      exp: (claims.iat as number) + 3600,
    });

    expect(sends(googleReceived, bob)).toEqual([]);
    const [send] = sends(googleReceived, alice);
    expect(send).toMatchObject({ httpVersion: '2.0', method: 'POST', path: `/v1/projects/${PROJECT_ID}/messages:send` });
    expect(send.headers.authorization).toBe(`Bearer ya29.access-${grants}`);
    expect(send.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(send.body)).toEqual({
      message: {
        token: alice,
        notification: { title: 'Hello', body: 'Donuts are here' },
        android: { notification: { icon: 'donut' } },
        data: { flavour: 'glazed', count: '3', pusher: JSON.stringify({ publishId }) },
      },
    });

    // The access token is cached: a second publish needs no new grant.
    const grantsBefore = grants;
    const second = await beams().publishToUsers(['alice'], { fcm });
    expect(await delivered(second.publishId)).toMatchObject({ delivered: 1 });
    expect(grants).toBe(grantsBefore);
  });

  it('removes devices whose tokens APNs or FCM report invalid, and retries a 5xx', async () => {
    const unregistered = apnsToken();
    const badToken = apnsToken();
    const flaky = apnsToken();
    const fcmGone = fcmToken('gone');
    const fcmInvalid = fcmToken('invalid');
    const fcmFlaky = fcmToken('flaky');
    scripted.set(unregistered, [{ status: 410, body: { reason: 'Unregistered', timestamp: Date.now() } }]);
    scripted.set(badToken, [{ status: 400, body: { reason: 'BadDeviceToken' } }]);
    scripted.set(flaky, [{ status: 503, body: { reason: 'ServiceUnavailable' } }]);
    scripted.set(fcmGone, [
      { status: 404, body: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } } },
    ]);
    scripted.set(fcmInvalid, [
      {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'The registration token is not a valid FCM registration token',
            status: 'INVALID_ARGUMENT',
            details: [
              { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
              { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.token', description: 'Invalid registration token' }] },
            ],
          },
        },
      },
    ]);
    scripted.set(fcmFlaky, [{ status: 500, body: { error: { code: 500, status: 'INTERNAL', message: 'Internal error' } } }]);
    const apnsIds = [await registerApns(unregistered, ['faults']), await registerApns(badToken, ['faults']), await registerApns(flaky, ['faults'])];
    const fcmIds = [await registerFcm(fcmGone, ['faults']), await registerFcm(fcmInvalid, ['faults']), await registerFcm(fcmFlaky, ['faults'])];

    const { publishId } = await beams().publishToInterests(['faults'], { apns: { aps: { alert: 'Faults' } }, fcm: { notification: { title: 'Faults' } } });
    expect(await delivered(publishId)).toMatchObject({ devices: 6, delivered: 2, failed: 0, removed: 4 });

    expect(sends(apnsReceived, flaky)).toHaveLength(2); // the 503, then the retry that succeeded
    expect(sends(googleReceived, fcmFlaky)).toHaveLength(2);
    for (const [platform, id] of [['apns', apnsIds[0]], ['apns', apnsIds[1]], ['fcm', fcmIds[0]], ['fcm', fcmIds[1]]]) {
      expect(await call('GET', devices(platform, `/${id}/interests`))).toMatchObject({ status: 404, json: { error: 'not_found/device_not_found' } });
    }
    expect((await call('GET', devices('apns', `/${apnsIds[2]}/interests`))).status).toBe(200);
    const removal = (await s.server.app.get<EventStore>(EVENT_STORE).readStream(`beamsdevice-${s.instanceId}.${apnsIds[0]}`, { fromRevision: 0 })).find(
      (e) => e.type === 'BeamsDeviceDeleted',
    );
    expect(removal?.data).toMatchObject({ reason: 'push_service_gone' });
  });

  it('follows an Android token refresh, and refuses bad registrations and another platform’s device ids', async () => {
    const old = fcmToken('old');
    const renewed = fcmToken('renewed');
    const id = await registerFcm(old, ['refresh']);
    expect(await call('PUT', devices('fcm', `/${id}/token`), { token: renewed })).toEqual({ status: 200, json: {} });
    const { publishId } = await beams().publishToInterests(['refresh'], { fcm: { notification: { title: 'New token' } } });
    expect(await delivered(publishId)).toMatchObject({ devices: 1, delivered: 1 });
    expect(sends(googleReceived, old)).toEqual([]);
    expect(sends(googleReceived, renewed)).toHaveLength(1);

    const bad = (answer: { status: number; json: any }, status: number, error: string) => expect(answer).toMatchObject({ status, json: { error, description: expect.any(String) } });
    bad(await call('POST', devices('apns'), { token: 'not hex', bundleIdentifier: BUNDLE_ID }), 400, 'bad_request/invalid_token');
    bad(await call('POST', devices('apns'), { token: apnsToken() }), 400, 'bad_request/invalid_bundle_identifier');
    bad(await call('POST', devices('fcm'), { token: 42 }), 400, 'bad_request/invalid_token');
    bad(await call('PUT', devices('fcm', `/${id}/token`), { token: '' }), 400, 'bad_request/invalid_token');
    // An FCM device is not found under the APNs or web paths.
    bad(await call('GET', devices('apns', `/${id}/interests`)), 404, 'not_found/device_not_found');
    bad(await call('GET', devices('web', `/${id}/interests`)), 404, 'not_found/device_not_found');
  });

  it('counts an unconfigured provider’s devices as failed, keeps them, and stays healthy', async () => {
    const plain = await startTestServer();
    try {
      const registered = await fetch(`${plain.baseUrl}/device_api/v1/instances/${plain.instanceId}/devices/fcm`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: fcmToken('unconfigured'), metadata: { sdkVersion: '1.9.0' } }),
      });
      const { id } = (await registered.json()) as { id: string };
      expect((await fetch(`${plain.baseUrl}/device_api/v1/instances/${plain.instanceId}/devices/fcm/${id}/interests/lonely`, { method: 'POST' })).status).toBe(200);
      const client = new PushNotifications({ instanceId: plain.instanceId, secretKey: plain.secret, endpoint: '127.0.0.1', port: plain.server.httpPort } as any);
      const { publishId } = await client.publishToInterests(['lonely'], { fcm: { notification: { title: 'Nobody' } } });
      const store = plain.server.app.get<EventStore>(EVENT_STORE);
      const outcome = await eventually(
        async () => (await store.readStream(`beamspublish-${plain.instanceId}.${publishId}`, { fromRevision: 0 })).find((e) => e.type === 'BeamsPublishDelivered')?.data,
        { timeoutMs: 20_000, everyMs: 50 },
      );
      expect(outcome).toMatchObject({ devices: 1, delivered: 0, failed: 1, removed: 0 });
      // Kept, not removed: it is delivered once the deployment has FCM credentials.
      expect((await fetch(`${plain.baseUrl}/device_api/v1/instances/${plain.instanceId}/devices/fcm/${id}/interests`)).status).toBe(200);
      expect((await plain.request('GET', '/health', { token: null })).status).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
