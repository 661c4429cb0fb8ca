/**
 * Beams publish webhooks end to end: a local HTTP endpoint run by the test receives the
 * webhooks of a publish made with the unmodified server SDK, checks each signature with the
 * instance's secret, answers 500 to the first POST and 200 after; the retry carries the same
 * body, and every attempt shows in `npm run audit -- <instance> publish <id>`. A webhook
 * pending when the server stops is sent by the next server on the same data directory.
 */
import PushNotifications from '@pusher/push-notifications-server';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { run as audit } from '../../src/cli/audit';
import { captureIo } from '../cli/cli-support';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

interface Received {
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly status: number;
}

describe('Beams publish webhooks', () => {
  let s: TestServer;
  let endpoint: Server;
  let endpointPort: number;
  const received: Received[] = [];
  /** How many more POSTs each path answers 500 to. */
  const failing = new Map<string, number>();

  const beams = (server: TestServer) =>
    new PushNotifications({ instanceId: server.instanceId, secretKey: server.secret, endpoint: '127.0.0.1', port: server.server.httpPort } as any);
  // A generous correctness bound, not a timing assertion.
  const until = <T>(probe: () => T | undefined | Promise<T | undefined>) => eventually(probe, { timeoutMs: 20_000, everyMs: 50 });
  const accepted = (path: string) => received.filter((r) => r.path === path && r.status === 200);
  const auditPublish = async (server: TestServer, publishId: string) => {
    const io = captureIo();
    expect(await audit([server.instanceId, 'publish', publishId, '--json'], { DATA_DIR: server.dataDir }, io)).toBe(0);
    return { events: io.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)), text: io.text() };
  };

  /** The servers' settings: the receiver is on a loopback address, which webhooks reach only when allowed. */
  const allowingTheReceiver = () => ({ env: { WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${endpointPort}` } });

  beforeAll(async () => {
    endpoint = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const failures = failing.get(request.url!) ?? 0;
        if (failures > 0) failing.set(request.url!, failures - 1);
        const status = failures > 0 ? 500 : 200;
        received.push({ path: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    endpointPort = (endpoint.address() as AddressInfo).port;
    s = await startTestServer(allowingTheReceiver());
  });
  afterAll(async () => {
    await new Promise((resolve) => endpoint?.close(resolve));
    await s?.close();
  });

  it('sends signed webhooks at acceptance and at the end, retries a 500, and records every attempt', async () => {
    failing.set('/hooks/a', 1);
    const webhookUrl = `http://127.0.0.1:${endpointPort}/hooks/a`;
    const { publishId } = await beams(s).publishToInterests(['donuts'], { web: { notification: { title: 'Hi' } }, webhookUrl } as any);

    const [acceptedHook, finishedHook] = await until(() => (accepted('/hooks/a').length >= 2 ? accepted('/hooks/a') : undefined));
    const all = received.filter((r) => r.path === '/hooks/a');
    expect(all.map((r) => r.status)).toEqual([500, 200, 200]);
    // The retry is the same webhook, byte for byte.
    expect(all[1].body).toBe(all[0].body);
    for (const hook of all) {
      const expected = createHmac('sha1', s.secret).update(hook.body).digest('hex');
      expect(hook.headers['webhook-signature']).toBe(expected);
      expect(hook.headers['content-type']).toBe('application/json');
    }
    expect(JSON.parse(acceptedHook.body)).toEqual({
      payload: { instance_id: s.instanceId, publish_id: publishId, kind: 'interests', interests: ['donuts'] },
      metadata: { created_at: expect.any(String), event_type: 'v1.PublishAccepted', event_id: `${publishId}.accepted`, product: 'beams' },
      custom_data: {},
    });
    expect(acceptedHook.headers['webhook-event-type']).toBe('v1.PublishAccepted');
    expect(JSON.parse(finishedHook.body)).toMatchObject({
      payload: { publish_id: publishId, devices: 0, delivered_to_gateway: 0, gateway_failed: 0, devices_removed: 0 },
      metadata: { event_type: 'v1.PublishToInterestsAttempt', event_id: `${publishId}.finished` },
    });

    const { events, text } = await until(async () => {
      const trail = await auditPublish(s, publishId);
      return trail.events.filter((e) => e.type === 'BeamsPublishWebhookAttempted').length >= 3 ? trail : undefined;
    });
    expect(events.filter((e) => e.type === 'BeamsPublishWebhookAttempted').map((e) => e.data)).toEqual([
      expect.objectContaining({ event_type: 'v1.PublishAccepted', attempt: 1, status: 500, outcome: 'retrying', next_attempt_at: expect.any(String) }),
      expect.objectContaining({ event_type: 'v1.PublishAccepted', attempt: 2, status: 200, outcome: 'delivered' }),
      expect.objectContaining({ event_type: 'v1.PublishToInterestsAttempt', attempt: 1, status: 200, outcome: 'delivered' }),
    ]);
    expect(text).not.toContain(s.secret);
    expect(text).not.toContain(all[0].headers['webhook-signature']);
  });

  it('sends a publish to users its PublishToUsersAttempt, and refuses a webhookUrl that is not http(s)', async () => {
    const webhookUrl = `http://127.0.0.1:${endpointPort}/hooks/users`;
    const { publishId } = await beams(s).publishToUsers(['alice'], { web: { notification: { title: 'Hi' } }, webhookUrl } as any);
    const hooks = await until(() => (accepted('/hooks/users').length >= 2 ? accepted('/hooks/users') : undefined));
    expect(hooks.map((h) => JSON.parse(h.body).metadata.event_type)).toEqual(['v1.PublishAccepted', 'v1.PublishToUsersAttempt']);
    expect(JSON.parse(hooks[0].body).payload).toEqual({ instance_id: s.instanceId, publish_id: publishId, kind: 'users', users: ['alice'] });

    const refused = await s.request('POST', `/publish_api/v1/instances/${s.instanceId}/publishes/interests`, {
      body: { interests: ['donuts'], web: { notification: { title: 'Hi' } }, webhookUrl: 'ftp://example.com/x' },
      token: null,
      headers: { authorization: `Bearer ${s.secret}` },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: expect.any(String), description: expect.stringContaining('webhookUrl') });
  });

  it('resumes a webhook left pending by a stopped server once the next one starts on the same data', async () => {
    // A server of its own on a data directory that outlives it (the shared one is removed on close).
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-webhooks-restart-'));
    const shared = s;
    try {
      s = await startTestServer({ dataDir, ...allowingTheReceiver() });
      failing.set('/hooks/restart', 1);
      const webhookUrl = `http://127.0.0.1:${endpointPort}/hooks/restart`;
      const { publishId } = await beams(s).publishToInterests(['bagels'], { web: { notification: { title: 'Hi' } }, webhookUrl } as any);
      // Stopped once the failed first attempt is recorded and its retry scheduled.
      await until(async () => ((await auditPublish(s, publishId)).events.some((e) => e.data?.outcome === 'retrying') ? true : undefined));
      const { instanceId, secret } = s;
      await s.close();

      s = await startTestServer({ dataDir, ...allowingTheReceiver() });
      const delivered = await until(() => (accepted('/hooks/restart').length >= 2 ? accepted('/hooks/restart') : undefined));
      expect(delivered.map((h) => JSON.parse(h.body).metadata.event_type)).toEqual(['v1.PublishAccepted', 'v1.PublishToInterestsAttempt']);
      expect(delivered[0].headers['webhook-signature']).toBe(createHmac('sha1', secret).update(delivered[0].body).digest('hex'));
      const attempts = await until(async () => {
        const io = captureIo();
        expect(await audit([instanceId, 'publish', publishId, '--json'], { DATA_DIR: dataDir }, io)).toBe(0);
        const found = io.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).filter((e) => e.type === 'BeamsPublishWebhookAttempted');
        return found.length >= 3 ? found : undefined;
      });
      expect(attempts.map((e) => [e.data.attempt, e.data.status])).toEqual([[1, 500], [2, 200], [1, 200]]);
      await s.close();
    } finally {
      s = shared;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  describe('to addresses that are not public', () => {
    /** Attempts of a publish's webhooks, as the audit trail shows them once `count` are recorded. */
    const attemptsOf = async (server: TestServer, publishId: string, count: number) =>
      until(async () => {
        const found = (await auditPublish(server, publishId)).events.filter((e) => e.type === 'BeamsPublishWebhookAttempted');
        return found.length >= count ? found.map((e) => e.data) : undefined;
      });

    it('refuses a loopback webhookUrl unless WEBHOOK_ALLOWED_HOSTS allows it: nothing is sent, and the attempt is given up and recorded', async () => {
      const strict = await startTestServer();
      try {
        for (const [path, host] of [['/hooks/loopback', `127.0.0.1:${endpointPort}`], ['/hooks/localhost', `localhost:${endpointPort}`]]) {
          const webhookUrl = `http://${host}${path}`;
          const { publishId } = await beams(strict).publishToInterests(['donuts'], { web: { notification: { title: 'Hi' } }, webhookUrl } as any);
          // Both webhooks of the publish (accepted, then attempted) are settled at their first attempt.
          const attempts = await attemptsOf(strict, publishId, 2);
          expect(attempts).toEqual([
            expect.objectContaining({ event_type: 'v1.PublishAccepted', attempt: 1, status: null, outcome: 'given_up', next_attempt_at: null }),
            expect.objectContaining({ event_type: 'v1.PublishToInterestsAttempt', attempt: 1, status: null, outcome: 'given_up' }),
          ]);
          expect(attempts[0].error).toMatch(/127\.0\.0\.1,? (is )?a loopback address.*WEBHOOK_ALLOWED_HOSTS/);
          expect(received.filter((r) => r.path === path)).toEqual([]);
        }
      } finally {
        await strict.close();
      }
    });

    it('delivers to a receiver the variable allows by host, host:port or CIDR range, and to no other port', async () => {
      for (const allowed of ['127.0.0.1', `localhost:${endpointPort}`, '127.0.0.0/8', `[::ffff:127.0.0.1]:${endpointPort}`]) {
        const server = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: `hooks.internal, ${allowed}` } });
        try {
          const host = allowed.startsWith('localhost') ? 'localhost' : '127.0.0.1';
          const path = `/hooks/allowed-${allowed.replace(/[^a-z0-9]/gi, '_')}`;
          const { publishId } = await beams(server).publishToInterests(['donuts'], {
            web: { notification: { title: 'Hi' } },
            webhookUrl: `http://${host}:${endpointPort}${path}`,
          } as any);
          expect((await until(() => (accepted(path).length >= 2 ? accepted(path) : undefined))).length).toBe(2);
          expect((await attemptsOf(server, publishId, 2)).map((a) => a.outcome)).toEqual(['delivered', 'delivered']);
        } finally {
          await server.close();
        }
      }
      const otherPort = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${endpointPort + 1}` } });
      try {
        const { publishId } = await beams(otherPort).publishToInterests(['donuts'], {
          web: { notification: { title: 'Hi' } },
          webhookUrl: `http://127.0.0.1:${endpointPort}/hooks/other-port`,
        } as any);
        expect((await attemptsOf(otherPort, publishId, 2)).map((a) => a.outcome)).toEqual(['given_up', 'given_up']);
        expect(received.filter((r) => r.path === '/hooks/other-port')).toEqual([]);
      } finally {
        await otherPort.close();
      }
    });
  });
});
