/**
 * A Beams publish's delivery report over HTTP (`GET /services/parley_admin/v1/<instance>/beams/
 * publishes/:publishId`), on a real server: pending, then delivered with its counts, its publish
 * webhooks' attempts (a local endpoint answers 500 once, then 200), and the publish's events as
 * `npm run audit -- <instance> publish <id> --json` prints them. su tokens of the instance only.
 */
import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { run as audit } from '../../src/cli/audit';
import { captureIo } from '../cli/cli-support';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

describe('Beams publish report (parley_admin beams/publishes/:publishId)', () => {
  let s: TestServer;
  let endpoint: Server;
  let endpointPort: number;
  let failuresLeft = 1;
  const report = (publishId: string, token?: string | null) => s.request('GET', `/services/parley_admin/v1/${s.instanceId}/beams/publishes/${encodeURIComponent(publishId)}`, { token });
  const beams = () => new PushNotifications({ instanceId: s.instanceId, secretKey: s.secret, endpoint: '127.0.0.1', port: s.server.httpPort } as any);

  beforeAll(async () => {
    endpoint = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(failuresLeft-- > 0 ? 500 : 200).end());
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    endpointPort = (endpoint.address() as AddressInfo).port;
    s = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${endpointPort}` } });
  });
  afterAll(async () => {
    await new Promise((resolve) => endpoint?.close(resolve));
    await s?.close();
  });

  it('reports a publish: its target and publisher, then delivered with its counts and its webhooks, with the events the audit CLI prints', async () => {
    const webhookUrl = `http://127.0.0.1:${endpointPort}/hook`;
    const { publishId } = await beams().publishToUsers(['ursula'], { web: { notification: { title: 'Report me' } }, webhookUrl } as any);
    const first = await report(publishId);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      publish_id: publishId,
      target: { kind: 'users', users: ['ursula'] },
      accepted_at: expect.any(String),
      accepted_by: { key_id: s.keyId },
      webhook_url: webhookUrl,
    });
    expect(['pending', 'delivered']).toContain(first.body.status);
    // Delivered (the user has no device) and both webhooks settled, the first after a retry.
    const done = await eventually(
      async () => {
        const { body } = await report(publishId);
        return body.status === 'delivered' && body.webhooks.length === 2 && body.webhooks.every((w: any) => w.outcome === 'delivered') ? body : undefined;
      },
      { timeoutMs: 20_000, what: 'the publish delivered and its webhooks settled' },
    );
    expect(done.delivery).toEqual({ devices: 0, delivered: 0, failed: 0, removed: 0, delivered_at: expect.any(String) });
    expect(done.webhooks).toEqual([
      { event_type: 'v1.PublishAccepted', attempts: 2, outcome: 'delivered', status: 200, error: null, attempted_at: expect.any(String), next_attempt_at: null },
      { event_type: 'v1.PublishToUsersAttempt', attempts: 1, outcome: 'delivered', status: 200, error: null, attempted_at: expect.any(String), next_attempt_at: null },
    ]);
    const io = captureIo();
    expect(await audit([s.instanceId, 'publish', publishId, '--json'], { DATA_DIR: s.dataDir }, io)).toBe(0);
    const printed = io.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(done.events).toEqual(printed);
    expect(done.events.map((e: any) => e.type)).toEqual(expect.arrayContaining(['BeamsPublishAccepted', 'BeamsPublishDelivered', 'BeamsPublishWebhookAttempted']));
    expect(JSON.stringify(done)).not.toContain(s.secret);
  });

  it('answers 404 for a publish the instance does not have, and refuses anyone but an su token of the instance', async () => {
    const { publishId } = await beams().publishToInterests(['secret-plans'], { web: { notification: { title: 'Not for strangers' } } } as any);
    expect((await report('pubid-nothing-here')).body.error).toBe('services/parley_admin/not_found/publish_not_found');
    const otherInstance = jwt.sign({ instance: 'another-instance', iss: `api_keys/${s.keyId}`, su: true }, s.secret, { algorithm: 'HS256', expiresIn: 600 });
    const forged = jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, su: true }, 'not-the-secret', { algorithm: 'HS256', expiresIn: 600 });
    for (const token of [null, forged, otherInstance]) {
      const refused = await report(publishId, token);
      expect(refused.status).toBe(401);
      expect(refused.text).not.toContain('secret-plans');
    }
    const asUser = await report(publishId, s.token({ sub: 'ursula' }));
    expect([asUser.status, asUser.body.error]).toEqual([403, 'services/parley_admin/forbidden/su_required']);
    expect(asUser.text).not.toContain('secret-plans');
    // The instance key's secret is the Beams server SDK's credential, not this API's.
    expect((await report(publishId, s.secret)).status).toBe(401);
  });
});
