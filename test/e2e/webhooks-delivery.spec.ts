import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instanceCalls } from '../support/instance-calls';
import { ServerProcess, startProcess } from '../support/server-process';
import { eventually, sleep } from '../support/waiting';
import { signedWith, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Chatkit webhooks delivered from the log, on a real server from dist/ with local receivers:
 * in log order per webhook, signed, retried on the configured schedule (shortened here), the
 * webhook deactivated (and visibly so) when every attempt fails, resumed with the failed event
 * on reactivation; a hanging receiver holds up no other webhook and no write; replay from a
 * position or a time; the pull feed serves the same events.
 */
const INSTANCE = 'hooks-delivery';
const KEY = 'delivery-key:delivery-secret-8c1f2e7a90';
const SCHEDULE_MS = [300, 300, 300];
const TIMEOUT_MS = 3_000;

let dataDir: string;
let server: ServerProcess;
const { call, as } = instanceCalls(INSTANCE, KEY, () => server.port);
const hooks = (path = '') => `/services/parley_webhooks/v1/${INSTANCE}/webhooks${path}`;
const v6 = (path: string) => `/services/chatkit/v6/${INSTANCE}${path}`;
const receivers: WebhookReceiver[] = [];
const newReceiver = async (port?: number) => {
  const receiver = await WebhookReceiver.start(port);
  receivers.push(receiver);
  return receiver;
};

let roomId: string;
let sent = 0;
/** Sends `n` messages as alice; resolves with their texts, in order. */
async function send(n: number): Promise<string[]> {
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const text = `message ${++sent}`;
    await call('POST', v6(`/rooms/${roomId}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, as: as('alice') });
    texts.push(text);
  }
  return texts;
}
/** The webhook's delivery log once it holds `n` entries (it is written a moment after the receiver's answers, a group at a time). */
const deliveryLog = (id: string, n: number): Promise<any[]> =>
  eventually(async () => {
    const log = (await call('GET', hooks(`/${id}/deliveries`))).body;
    return log.length >= n && log;
  }, { what: `${n} entries in the delivery log` });
const textsOf = (bodies: any[]) => bodies.flatMap((b) => b.payload.messages.map((m: any) => m.parts[0].content));
async function createWebhook(receiver: WebhookReceiver, extra: Record<string, unknown> = {}): Promise<string> {
  return (await call('POST', hooks(), { body: { url: receiver.url(), secret: 'the-secret', event_types: ['v1.messages_created'], ...extra } })).body.id;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'parley-webhooks-delivery-'));
  server = await startProcess('dist/src/main.js', {
    DATA_DIR: dataDir,
    INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
    INSTANCE_KEY: KEY,
    MASTER_KEY: '',
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE_MS: SCHEDULE_MS.join(','),
    WEBHOOK_DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    RATE_LIMIT_PER_USER: '0',
  });
  await call('POST', v6('/users'), { body: { id: 'alice', name: 'Alice' } });
  roomId = (await call('POST', v6('/rooms'), { body: { name: 'hooks', created_by_id: 'alice' }, as: as('alice') })).body.id;
}, 90_000);

afterAll(async () => {
  await server?.stop();
  for (const receiver of receivers) await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhook delivery', () => {
  it("delivers what happens after the webhook's creation, in log order, signed, with its custom data and a stable event id", async () => {
    const receiver = await newReceiver();
    await send(2); // before the webhook: not carried
    const id = await createWebhook(receiver, { custom_data: { team: 'search' } });
    const texts = await send(8);
    await eventually(() => receiver.requests.length >= 8, { what: '8 deliveries' });
    expect(textsOf(receiver.delivered())).toEqual(texts);
    for (const request of receiver.requests) {
      expect(signedWith(request, 'the-secret')).toBe(true);
      expect(signedWith(request, 'another-secret')).toBe(false);
      const body = JSON.parse(request.body);
      expect(body.metadata.event_type).toBe('v1.messages_created');
      expect(body.custom_data).toEqual({ team: 'search' });
      expect(request.headers['webhook-id']).toBe(id);
      expect(request.headers['content-type']).toBe('application/json');
    }
    const eventIds = receiver.delivered().map((b) => b.metadata.event_id);
    expect(new Set(eventIds).size).toBe(8);
    const log = await deliveryLog(id, 8);
    expect(log).toHaveLength(8);
    expect(log.map((d: any) => d.event_id).reverse()).toEqual(eventIds);
    expect(log[0]).toEqual({
      id: expect.any(String),
      event_id: eventIds[7],
      event_type: 'v1.messages_created',
      position: expect.any(String),
      status: 'delivered',
      attempts: 1,
      response_code: 200,
      delivered_at: expect.any(String),
    });
    expect(JSON.stringify(log)).not.toContain('message ');
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('delivers a thread reply as a created message with its parent_id (also_in_room when it shows in the room too)', async () => {
    const receiver = await newReceiver();
    const id = await createWebhook(receiver);
    const text = (content: string) => ({ parts: [{ type: 'text/plain', content }] });
    const parent = (await call('POST', v6(`/rooms/${roomId}/messages`), { body: text('a parent'), as: as('alice') })).body.message_id;
    await call('POST', v6(`/rooms/${roomId}/messages/${parent}/replies`), { body: text('a reply'), as: as('alice') });
    await call('POST', v6(`/rooms/${roomId}/messages/${parent}/replies`), { body: { ...text('a reply in both'), also_in_room: true }, as: as('alice') });
    await eventually(() => receiver.requests.length >= 3, { what: '3 deliveries' });
    expect(receiver.delivered().map((b) => b.payload.messages[0]).map((m: any) => [m.parts[0].content, m.parent_id, m.also_in_room])).toEqual([
      ['a parent', undefined, undefined],
      ['a reply', parent, undefined],
      ['a reply in both', parent, true],
    ]);
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('retries a 500-answering receiver on the schedule with the same request, then deactivates the webhook and says so; reactivated, it resumes with the failed event', async () => {
    const receiver = await newReceiver();
    receiver.answer = () => 500;
    const id = await createWebhook(receiver);
    const [failed] = await send(1);
    const inactive = await eventually(async () => {
      const webhook = (await call('GET', hooks(`/${id}`))).body;
      return !webhook.active && webhook;
    }, { timeoutMs: 30_000, what: 'the webhook deactivated' });
    expect(receiver.requests).toHaveLength(SCHEDULE_MS.length + 1);
    const [first, ...retries] = receiver.requests;
    for (const retry of retries) {
      expect(retry.body).toBe(first.body);
      expect(retry.headers['webhook-signature']).toBe(first.headers['webhook-signature']);
    }
    const eventId = JSON.parse(first.body).metadata.event_id;
    expect(inactive.deactivated).toEqual({ by: 'delivery', at: expect.any(String), event_id: eventId, event_type: 'v1.messages_created', attempts: 4, response_code: 500 });
    expect((await call('GET', hooks())).body.find((w: any) => w.id === id)).toMatchObject({ active: false, deactivated: { by: 'delivery', attempts: 4 } });
    expect(await deliveryLog(id, 1)).toEqual([expect.objectContaining({ event_id: eventId, status: 'failed', attempts: 4, response_code: 500 })]);

    // While inactive nothing is sent; nothing is lost either.
    const later = await send(2);
    receiver.answer = () => 200;
    await call('PUT', hooks(`/${id}`), { body: { active: true } });
    await eventually(() => receiver.delivered().length >= 3, { what: 'the failed event and the later ones' });
    expect(textsOf(receiver.delivered())).toEqual([failed, ...later]);
    expect(receiver.delivered()[0].metadata.event_id).toBe(eventId);
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('loses nothing while a receiver is down, briefly (within the retries) or for longer (deactivated, then reactivated)', async () => {
    const receiver = await newReceiver();
    const id = await createWebhook(receiver);
    // Briefly: the connection is dropped twice, then the receiver answers.
    let drops = 2;
    receiver.answer = () => (drops-- > 0 ? 'reset' : 200);
    const brief = await send(3);
    await eventually(() => receiver.delivered().length >= 3, { what: 'the deliveries after a brief outage' });
    expect(textsOf(receiver.delivered())).toEqual(brief);
    expect((await call('GET', hooks(`/${id}`))).body.active).toBe(true);

    // Longer: the receiver is gone (connection refused) until the webhook is deactivated.
    const port = receiver.port;
    await receiver.close();
    const during = await send(3);
    await eventually(async () => !(await call('GET', hooks(`/${id}`))).body.active, { timeoutMs: 30_000, what: 'the webhook deactivated' });
    const back = await newReceiver(port);
    await call('PUT', hooks(`/${id}`), { body: { active: true } });
    const after = await send(1);
    await eventually(() => back.delivered().length >= 4, { what: 'every event of the outage and after' });
    expect(textsOf(back.delivered())).toEqual([...during, ...after]);
    await call('DELETE', hooks(`/${id}`));
  }, 90_000);

  it('holds up no other webhook and no write while a receiver hangs', async () => {
    const hanging = await newReceiver();
    hanging.answer = () => 'hang';
    const live = await newReceiver();
    const stuck = await createWebhook(hanging);
    const id = await createWebhook(live);
    const texts = await send(5);
    await eventually(() => live.delivered().length >= 5, { what: 'the live webhook delivered' });
    expect(textsOf(live.delivered())).toEqual(texts);
    // The hanging receiver's first event is still being attempted (each attempt waits WEBHOOK_DELIVERY_TIMEOUT_MS).
    expect((await call('GET', hooks(`/${stuck}/deliveries`))).body).toEqual([]);
    expect((await call('GET', hooks(`/${stuck}`))).body.active).toBe(true);
    await call('DELETE', hooks(`/${stuck}`));
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('replays from a log position or a time, with the same event ids, then goes on live', async () => {
    const receiver = await newReceiver();
    const id = await createWebhook(receiver);
    const firsts = await send(3);
    await sleep(20); // lets the clock pass between two writes: the time below lies strictly between them
    const between = new Date().toISOString();
    await sleep(20);
    const seconds = await send(2);
    await eventually(() => receiver.delivered().length >= 5, { what: 'the first deliveries' });
    const delivered = receiver.delivered();
    const log = (await deliveryLog(id, 5)).reverse();
    expect(log.map((d: any) => d.event_id)).toEqual(delivered.map((b) => b.metadata.event_id));

    const fromPosition = await call('POST', hooks(`/${id}/replay`), { body: { from_position: log[1].position } });
    expect(fromPosition.status).toBe(202);
    expect(fromPosition.body).toEqual({ id, replay: 1, from_position: log[1].position });
    await eventually(() => receiver.delivered().length >= 8, { what: 'the replay from a position' });
    expect(receiver.delivered().slice(5)).toEqual(delivered.slice(2));

    await call('POST', hooks(`/${id}/replay`), { body: { from_time: between } });
    await eventually(() => receiver.delivered().length >= 10, { what: 'the replay from a time' });
    expect(receiver.delivered().slice(8)).toEqual(delivered.slice(3));

    // From the start of the log: every message of the instance, the ones sent before the webhook existed too, then live.
    await call('POST', hooks(`/${id}/replay`), { body: { from_position: '' } });
    const before = sent;
    // Other tests' messages in the instance (a thread's replies) are replayed too, in their places; `send`'s come in order, the last of the log last.
    const replayedSends = () => textsOf(receiver.delivered().slice(10)).filter((text) => /^message \d+$/.test(text));
    await eventually(() => replayedSends().length >= before, { what: 'the replay from the start' });
    expect(replayedSends()).toEqual(Array.from({ length: before }, (_, i) => `message ${i + 1}`));
    expect(textsOf(receiver.delivered().slice(10))).toEqual(expect.arrayContaining([...firsts, ...seconds]));
    const replayed = receiver.delivered().length;
    const live = await send(1);
    await eventually(() => receiver.delivered().length >= replayed + 1, { what: 'the live event after the replay' });
    expect(textsOf(receiver.delivered().slice(replayed))).toEqual(live);

    // A position that is not one of the log's would stop the webhook's deliveries for good: refused.
    for (const body of [{}, { from_position: '', from_time: between }, { from_time: 'yesterday' }, { from_position: 'abc' }, { from_position: '5' }, { from_position: '1:2' }]) {
      const refused = await call('POST', hooks(`/${id}/replay`), { body, anyStatus: true });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('services/parley_webhooks/bad_request/invalid_replay');
    }
    await call('DELETE', hooks(`/${id}`));
  }, 90_000);

  it('redelivers one delivery on request: the same request again, logged as a redelivery', async () => {
    const receiver = await newReceiver();
    const id = await createWebhook(receiver);
    await send(3);
    await eventually(() => receiver.delivered().length >= 3, { what: 'the deliveries' });
    const log = (await deliveryLog(id, 3)).reverse();
    const asked = await call('POST', hooks(`/${id}/deliveries/${log[1].id}/redeliver`));
    expect(asked.status).toBe(202);
    expect(asked.body).toEqual({ delivery_id: log[1].id, event_id: log[1].event_id, redelivery: 1 });
    await eventually(() => receiver.requests.length >= 4, { what: 'the redelivery' });
    expect(receiver.requests[3].body).toBe(receiver.requests[1].body);
    expect(receiver.requests[3].headers['webhook-signature']).toBe(receiver.requests[1].headers['webhook-signature']);
    const [latest] = await deliveryLog(id, 4);
    expect(latest).toMatchObject({ event_id: log[1].event_id, position: log[1].position, redelivery: 1, status: 'delivered', attempts: 1, response_code: 200 });
    // Sent once per request: the next event goes out after it, and the redelivery is not repeated.
    const [next] = await send(1);
    await eventually(() => receiver.requests.length >= 5, { what: 'the next delivery' });
    expect(textsOf(receiver.delivered().slice(4))).toEqual([next]);
    const missing = await call('POST', hooks(`/${id}/deliveries/no-such-delivery/redeliver`), { anyStatus: true });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('services/parley_webhooks/not_found/delivery_not_found');
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('serves the same events to pull, from a position, page by page', async () => {
    const receiver = await newReceiver();
    const id = await createWebhook(receiver);
    await send(3);
    await eventually(() => receiver.delivered().length >= 3, { what: 'the deliveries' });
    const [firstLog] = (await deliveryLog(id, 3)).reverse();
    const pushed = receiver.delivered();
    // From just before the first delivered event: the pull feed starts at the same event.
    const all = (await call('GET', hooks(`/${id}/events?limit=1000`))).body.events;
    const from = all.findIndex((e: any) => e.position === firstLog.position);
    const pulled: any[] = [];
    let after = from === 0 ? '' : all[from - 1].position;
    for (let page = 0; pulled.length < 3 && page < 10; page++) {
      const answer = (await call('GET', hooks(`/${id}/events?after=${after}&limit=2`))).body;
      expect(answer.events.length).toBeLessThanOrEqual(2);
      pulled.push(...answer.events);
      after = answer.next;
    }
    expect(pulled.map((e) => ({ metadata: e.metadata, payload: e.payload }))).toEqual(
      pushed.map((b) => ({ metadata: b.metadata, payload: b.payload })),
    );
    for (const garbage of ['abc', '5']) {
      const refused = await call('GET', hooks(`/${id}/events?after=${garbage}`), { anyStatus: true });
      expect([garbage, refused.status, refused.body.error]).toEqual([garbage, 400, 'services/parley_webhooks/bad_request/invalid_position']);
    }
    await call('DELETE', hooks(`/${id}`));
  }, 60_000);
});
