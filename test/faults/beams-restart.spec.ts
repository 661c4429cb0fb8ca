import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createECDH, randomBytes } from 'node:crypto';
import { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { eventually, FaultLab, health, INSTANCE, processEnv } from './process-client';

const CERTS = join(__dirname, '..', '.certs');

/**
 * A local endpoint that, while `holding`, reads each request and never answers it (the
 * request is in flight when the server is killed), and afterwards answers `status`.
 */
class Endpoint {
  holding = true;
  readonly received: { url: string; body: string; held: boolean }[] = [];
  private readonly sockets = new Set<Socket>();
  readonly server: Server;

  constructor(tls: boolean, status: number) {
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ url: req.url ?? '', body: Buffer.concat(chunks).toString(), held: this.holding });
        if (!this.holding) res.writeHead(status).end();
      });
    };
    this.server = tls
      ? createHttpsServer({ cert: readFileSync(join(CERTS, 'localhost.pem')), key: readFileSync(join(CERTS, 'localhost-key.pem')) }, handle)
      : createHttpServer(handle);
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops holding: the connections of the killed server are dropped, later requests answered. */
  release(): void {
    this.holding = false;
    for (const s of this.sockets) s.destroy();
  }

  close(): Promise<void> {
    this.release();
    return new Promise((r) => this.server.close(() => r()));
  }

  answered = () => this.received.filter((r) => !r.held);
}

/**
 * A Beams publish whose Web Push delivery and webhook are in flight when the embedded server is
 * killed with -9: the restarted server resumes both at once, because it takes over its own
 * dead predecessor's delivery and webhook leases (30 s each) instead of waiting them out.
 */
describe('Beams delivery and webhooks across a kill -9 of the embedded server', () => {
  const lab = new FaultLab();
  const push = new Endpoint(true, 201);
  const hooks = new Endpoint(false, 200);
  afterAll(async () => {
    await lab.cleanUp();
    await Promise.all([push.close(), hooks.close()]);
  });

  it('resumes the push and the webhook left in flight, without waiting out the dead process’s leases', async () => {
    const [pushPort, hookPort] = await Promise.all([push.listen(), hooks.listen()]);
    const dir = lab.dataDir();
    const env = processEnv(dir, {
      BEAMS_WEB_PUSH_HOSTS: 'localhost',
      NODE_EXTRA_CA_CERTS: join(CERTS, 'localhost.pem'),
      // The test's receiver, on a loopback address webhooks may not reach otherwise.
      WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${hookPort}`,
    });
    let server = await lab.start('dist/src/main.js', env);
    const base = () => `http://127.0.0.1:${server.port}`;
    const json = { 'content-type': 'application/json' };

    const browser = createECDH('prime256v1');
    browser.generateKeys();
    const subscription = {
      endpoint: `https://localhost:${pushPort}/push/crash`,
      expirationTime: null,
      keys: { p256dh: browser.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
    };
    const devices = `${base()}/device_api/v1/instances/${INSTANCE}/devices/web`;
    const registered = await fetch(devices, { method: 'POST', headers: json, body: JSON.stringify({ token: Buffer.from(JSON.stringify(subscription)).toString('base64') }) });
    expect(registered.status).toBe(200);
    const { id } = (await registered.json()) as { id: string };
    expect((await fetch(`${devices}/${id}/interests`, { method: 'PUT', headers: json, body: JSON.stringify({ interests: ['crash'] }) })).status).toBe(200);

    const published = await fetch(`${base()}/publish_api/v1/instances/${INSTANCE}/publishes/interests`, {
      method: 'POST',
      headers: { ...json, authorization: 'Bearer fault-secret' },
      body: JSON.stringify({ interests: ['crash'], web: { notification: { title: 'hello' } }, webhookUrl: `http://127.0.0.1:${hookPort}/hook` }),
    });
    expect(published.status).toBe(200);
    const { publishId } = (await published.json()) as { publishId: string };

    // Both are in flight (received, unanswered) when the server dies.
    expect(await eventually(async () => push.received.length > 0 && hooks.received.length > 0, 20_000)).toBe(true);
    await server.stop('SIGKILL');
    push.release();
    hooks.release();

    server = await lab.start('dist/src/main.js', env);
    expect(await eventually(async () => (await health(server.port)).status === 200, 20_000)).toBe(true);
    // A generous correctness bound, well under the 30 s leases a restart used to wait out.
    const resumed = await eventually(
      async () => push.answered().length > 0 && hooks.answered().some((h) => h.body.includes('v1.PublishToInterestsAttempt')),
      15_000,
    );
    expect({ push: push.answered().map((r) => r.url), hooks: hooks.answered().map((h) => JSON.parse(h.body).metadata.event_type) }).toMatchObject({
      push: ['/push/crash'],
      hooks: expect.arrayContaining(['v1.PublishAccepted', 'v1.PublishToInterestsAttempt']),
    });
    expect(resumed).toBe(true);
    expect(hooks.answered().every((h) => JSON.parse(h.body).payload.publish_id === publishId)).toBe(true);
  }, 120_000);
});
