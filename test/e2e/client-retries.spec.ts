import { ChatServer, ErrorResponse, Feeds } from '../../src/client';
import { FakeService, SeenRequest, startFakeService } from '../support/idempotent-fake-service';
import { eventually } from '../support/waiting';

/**
 * Parley's client libraries retry writes safely: one `Idempotency-Key` per logical write, the
 * same on every attempt, against a local service that speaks the idempotency wire contract
 * (test/support/idempotent-fake-service.ts) and fails as networks and servers do. The same
 * behaviour against the real server, through a proxy that loses answers:
 * test/e2e/client-idempotency.spec.ts.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY = 'k:fake-secret';
/** Short waits (a timeout that ends a held attempt quickly); the fake's own Retry-After is still obeyed. */
const retry = { retries: 3, minDelayMs: 10, maxDelayMs: 1_500, timeoutMs: 1_000 };

/** What the fake answers each change with: a send's message id, a publish's item ids, a user. */
function answer(change: SeenRequest, n: number): { status: number; body: unknown } {
  if (change.method === 'GET') return { status: 200, body: { id: 'alice', name: 'Alice' } };
  if (change.path.endsWith('/messages')) return { status: 201, body: { message_id: n } };
  if (change.path.endsWith('/items') && change.method === 'POST') {
    const { items } = JSON.parse(change.body) as { items: unknown[] };
    return { status: 201, body: { item_ids: items.map((_, i) => `${n}-${i}`) } };
  }
  if (change.method === 'DELETE') return { status: 204, body: '' };
  return { status: 201, body: { ...JSON.parse(change.body || '{}'), n } };
}

describe('client libraries: idempotency keys and retries (a local service speaking the wire contract)', () => {
  let fake: FakeService;
  let chat: ChatServer;
  let feeds: Feeds;
  beforeEach(async () => {
    fake = await startFakeService(answer);
    const options = { instanceLocator: 'v1:local:fake', key: KEY, host: '127.0.0.1', port: fake.port, tls: false, retry };
    chat = new ChatServer(options);
    feeds = new Feeds(options);
  });
  afterEach(() => fake.close());

  const keysOf = (method: string) => fake.requests.filter((r) => r.method === method).map((r) => r.key);

  it('a send whose answer was lost is retried with the same key: one message, and the caller gets its id', async () => {
    fake.faults.push('drop-answer');
    const sent = await chat.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'hello' });
    expect(sent).toEqual({ message_id: 1 });
    expect(fake.changes).toHaveLength(1);
    expect(fake.requests.map((r) => [r.status, r.replayed])).toEqual([
      [null, false],
      [201, true],
    ]);
    const [key, again] = keysOf('POST');
    expect(key).toMatch(UUID);
    expect(again).toBe(key);
  });

  it('503 and a reset before the service took the write are retried with the same key until it is taken once', async () => {
    fake.faults.push('unavailable', 'reset-before');
    const sent = await chat.sendMultipartMessage({ roomId: 'general', userId: 'alice', parts: [{ type: 'text/plain', content: 'hi' }] });
    expect(sent).toEqual({ message_id: 1 });
    expect(fake.requests.map((r) => r.status)).toEqual([503, null, 201]);
    expect(new Set(keysOf('POST')).size).toBe(1);
    expect(fake.changes).toHaveLength(1);
  });

  it('a timed-out attempt still in flight: the retry meets 409 idempotency_key_in_flight, waits Retry-After, and gets the first answer', async () => {
    fake.faults.push('hold');
    const published = await feeds.publish('news', { headline: 'one' });
    expect(published).toEqual({ item_ids: ['1-0'] });
    const statuses = fake.requests.map((r) => [r.status, r.replayed]);
    // The held first attempt (completed when the 409 went out, answered to no one), the 409, the replay.
    expect(statuses).toEqual([
      [409, false],
      [null, false],
      [201, true],
    ]);
    expect(new Set(keysOf('POST')).size).toBe(1);
    expect(fake.changes).toHaveLength(1);
  }, 15_000);

  it("the caller's own key: two calls with it are one change and the same answer", async () => {
    const first = await chat.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'once', idempotencyKey: 'job-7/send' });
    const second = await chat.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'once', idempotencyKey: 'job-7/send' });
    expect(second).toEqual(first);
    expect(keysOf('POST')).toEqual(['job-7/send', 'job-7/send']);
    expect(fake.changes).toHaveLength(1);
    await expect(feeds.publishBatch('news', [1, 2], { idempotencyKey: 'batch-1' })).resolves.toEqual({ item_ids: ['2-0', '2-1'] });
    await expect(feeds.publishBatch('news', [1, 2], { idempotencyKey: 'batch-1' })).resolves.toEqual({ item_ids: ['2-0', '2-1'] });
    // The same key with another request is refused, not retried.
    await expect(feeds.publishBatch('news', [3], { idempotencyKey: 'batch-1' })).rejects.toMatchObject({
      status: 422,
      error: 'services/chatkit/unprocessable_entity/idempotency_key_reused',
    });
    expect(fake.requests.filter((r) => r.status === 422)).toHaveLength(1);
    const before = fake.requests.length;
    await expect(chat.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'x', idempotencyKey: 'has space' })).rejects.toThrow(TypeError);
    await expect(feeds.delete('news', { idempotencyKey: 'k'.repeat(256) })).rejects.toThrow(/idempotencyKey must be 1–255 visible ASCII/);
    expect(fake.requests).toHaveLength(before);
  });

  it('every write of both libraries carries a key of its own; reads carry none', async () => {
    await chat.createUser({ id: 'alice', name: 'Alice' });
    await chat.createRoom({ creatorId: 'alice', name: 'general' });
    await chat.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'hello' });
    await chat.deleteUser({ userId: 'alice' });
    await feeds.publish('news', { headline: 'one' });
    await feeds.publishBatch('news', [{ headline: 'two' }]);
    await feeds.delete('news');
    await chat.getUser({ id: 'alice' });
    await feeds.paginate('news');
    const writes = fake.requests.filter((r) => r.method !== 'GET');
    expect(writes.map((r) => r.method)).toEqual(['POST', 'POST', 'POST', 'DELETE', 'POST', 'POST', 'DELETE']);
    expect(writes.every((r) => UUID.test(r.key ?? ''))).toBe(true);
    expect(new Set(writes.map((r) => r.key)).size).toBe(writes.length);
    expect(fake.requests.filter((r) => r.method === 'GET').map((r) => r.key)).toEqual([undefined, undefined]);
  });

  it('gives up after the configured retries with the last answer, or the transport error; other refusals are not retried', async () => {
    fake.faults.push('unavailable', 'unavailable', 'unavailable', 'unavailable', 'unavailable');
    const error = await chat.createUser({ id: 'bob', name: 'Bob' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ErrorResponse);
    expect(error).toMatchObject({ status: 503, error: 'services/chatkit/service_unavailable/try_again', headers: expect.objectContaining({ 'retry-after': '0' }) });
    expect(fake.requests).toHaveLength(1 + retry.retries);
    expect(new Set(keysOf('POST')).size).toBe(1);
    expect(fake.changes).toHaveLength(0);

    fake.requests.length = 0;
    fake.faults.length = 0;
    fake.faults.push('reset-before', 'reset-before', 'reset-before', 'reset-before');
    const cut = await feeds.publish('news', 1).catch((e: unknown) => e);
    expect(cut).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(fake.requests).toHaveLength(1 + retry.retries);

    const once = new ChatServer({ instanceLocator: 'v1:local:fake', key: KEY, host: '127.0.0.1', port: fake.port, tls: false, retry: { retries: 0 } });
    fake.requests.length = 0;
    fake.faults.length = 0;
    fake.faults.push('drop-answer');
    await expect(once.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'no retry' })).rejects.toMatchObject({ message: 'fetch failed' });
    expect(fake.requests).toHaveLength(1);
  }, 20_000);

  it('reads are retried too, without a key', async () => {
    fake.faults.push('reset-before', 'unavailable');
    await expect(chat.getUser({ id: 'alice' })).resolves.toEqual({ id: 'alice', name: 'Alice' });
    expect(fake.requests.map((r) => [r.method, r.status, r.key])).toEqual([
      ['GET', null, undefined],
      ['GET', 503, undefined],
      ['GET', 200, undefined],
    ]);
  });

  it('a refused connection (the server restarting) is retried until the server is back, telling onRetry why', async () => {
    const { port } = fake;
    await fake.close();
    const retries: { attempt: number; code: unknown }[] = [];
    const patient = new ChatServer({
      instanceLocator: 'v1:local:fake',
      key: KEY,
      host: '127.0.0.1',
      port,
      tls: false,
      retry: { retries: 1_000, minDelayMs: 5, maxDelayMs: 20, onRetry: ({ attempt, error }) => retries.push({ attempt, code: (error as { cause?: { code?: unknown } }).cause?.code }) },
    });
    const sending = patient.sendSimpleMessage({ roomId: 'general', userId: 'alice', text: 'after the restart' });
    await eventually(() => retries.length > 0, { what: 'a refused attempt' });
    expect(retries[0]).toEqual({ attempt: 1, code: 'ECONNREFUSED' });
    fake = await startFakeService(answer, undefined, port);
    await expect(sending).resolves.toEqual({ message_id: 1 });
    expect(fake.changes).toHaveLength(1);
  });
});
