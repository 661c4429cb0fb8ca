import { ServerProcess } from '../support/server-process';
import { answerOf } from '../support/json-call';
import { eventually as waitFor } from '../support/waiting';
import { ReceivedRequest, WebhookReceiver } from '../support/webhook-receiver';
import { Answer, chat, FaultLab, INSTANCE, processEnv, tokenFor } from './process-client';

/**
 * Webhook delivery across kill -9, on real processes: the embedded server killed mid-delivery,
 * and projector workers (production's deliverers) killed one after another while a webhook's
 * events flow. Nothing is lost; an event is repeated only with the same event id and the same
 * bytes; first deliveries stay in log order; two processes never deliver one webhook at once.
 * Also: the SSRF check is made again at delivery, against the allow-list of the process that delivers.
 */
async function webhooks(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/services/parley_webhooks/v1/${INSTANCE}/webhooks${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor({ su: true })}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return answerOf(response);
}

const messageIdOf = (request: ReceivedRequest): number => JSON.parse(request.body).payload.messages[0].id;

/** What at-least-once in log order means at the receiver, for `count` messages (ids grow in log order; a restart takes a new block of them). */
function expectEveryMessageOnceOrRepeatedAlike(requests: readonly ReceivedRequest[], count: number): void {
  const firstSeen: number[] = [];
  const bodyOf = new Map<number, string>();
  for (const request of requests.filter((r) => r.answered === 200)) {
    const id = messageIdOf(request);
    const earlier = bodyOf.get(id);
    // A repeat carries the same event id, the same bytes and the same signature.
    if (earlier !== undefined) expect(request.body).toBe(earlier);
    else {
      bodyOf.set(id, request.body);
      firstSeen.push(id);
    }
  }
  expect(firstSeen).toHaveLength(count);
  expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
}

describe('webhook delivery across kill -9', () => {
  const lab = new FaultLab();
  const receivers: WebhookReceiver[] = [];
  afterEach(async () => {
    await lab.stopAll();
    for (const receiver of receivers.splice(0)) await receiver.close();
  });
  afterAll(() => lab.cleanUp());

  async function seed(port: number, receiver: WebhookReceiver): Promise<string> {
    expect((await chat(port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(port, 'POST', '/rooms', { id: 'r1', name: 'r1' }, { sub: 'ann' })).status).toBe(201);
    const created = await webhooks(port, 'POST', '', { url: receiver.url(), secret: 's', event_types: ['v1.messages_created'] });
    expect(created.status).toBe(201);
    return created.body.id;
  }
  const sendMessages = async (port: number, n: number) => {
    for (let i = 0; i < n; i++) expect((await chat(port, 'POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: `m${i}` }] }, { sub: 'ann' })).status).toBe(201);
  };

  it('the embedded server killed mid-delivery: after the restart nothing is lost, and a repeat has the same event id', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const env = processEnv(lab.dataDir(), { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_DELIVERY_TIMEOUT_MS: '60000', RATE_LIMIT_PER_USER: '0' });
    let server: ServerProcess = await lab.start('dist/src/main.js', env);
    await seed(server.port, receiver);
    // The 11th request hangs: the server is in the middle of delivering it when it is killed.
    let seen = 0;
    receiver.answer = () => (++seen === 11 ? 'hang' : 200);
    await sendMessages(server.port, 30);
    await waitFor(() => seen >= 11, { what: 'the 11th delivery under way' });
    await server.stop('SIGKILL');

    server = await lab.start('dist/src/main.js', env);
    await sendMessages(server.port, 10);
    await waitFor(() => new Set(receiver.requests.filter((r) => r.answered === 200).map(messageIdOf)).size >= 40, { timeoutMs: 60_000, what: 'all 40 messages delivered' });
    expectEveryMessageOnceOrRepeatedAlike(receiver.requests, 40);
  }, 180_000);

  it('projector workers killed one after another: another takes the webhook over, never two at once, nothing lost', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.answerAfterMs = 10;
    const env = processEnv(lab.dataDir(), { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', PROJECTION_LEASE_TTL_MS: '1000', RATE_LIMIT_PER_USER: '0' });
    const first = await lab.startWorker(env);
    const second = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    await seed(api.port, receiver);
    const delivered = () => new Set(receiver.requests.filter((r) => r.answered === 200).map(messageIdOf)).size;

    await sendMessages(api.port, 15);
    await waitFor(() => delivered() >= 15, { timeoutMs: 30_000, what: 'the first 15 delivered' });
    // Whichever of the two holds the webhook, one of the kills below lands on its holder.
    await first.stop('SIGKILL');
    await sendMessages(api.port, 15);
    await waitFor(() => delivered() >= 30, { timeoutMs: 30_000, what: '30 delivered after the first kill' });
    await lab.startWorker(env);
    await second.stop('SIGKILL');
    await sendMessages(api.port, 15);
    await waitFor(() => delivered() >= 45, { timeoutMs: 30_000, what: '45 delivered after the second kill' });

    expectEveryMessageOnceOrRepeatedAlike(receiver.requests, 45);
    expect(receiver.maxInFlight).toBe(1);
  }, 180_000);

  it('checks the target again at delivery: a server that no longer allows it refuses to send, and deactivates the webhook saying why', async () => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const dir = lab.dataDir();
    let server = await lab.start('dist/src/main.js', processEnv(dir, { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE_MS: '10' }));
    const id = await seed(server.port, receiver);
    await sendMessages(server.port, 1);
    await waitFor(() => receiver.requests.length === 1, { what: 'the first delivery' });
    await server.stop();

    server = await lab.start('dist/src/main.js', processEnv(dir, { WEBHOOK_RETRY_SCHEDULE_MS: '10' }));
    await sendMessages(server.port, 1);
    const inactive = await waitFor(async () => {
      const webhook = (await webhooks(server.port, 'GET', `/${id}`)).body;
      return !webhook.active && webhook;
    }, { timeoutMs: 30_000, what: 'the webhook deactivated' });
    expect(inactive.deactivated).toMatchObject({ by: 'delivery', attempts: 2, response_code: null, error: expect.stringMatching(/127\.0\.0\.1 is a loopback address.*WEBHOOK_ALLOWED_HOSTS/) });
    expect(receiver.requests).toHaveLength(1);
  }, 120_000);
});
