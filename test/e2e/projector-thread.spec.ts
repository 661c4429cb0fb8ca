import { threadId } from 'node:worker_threads';
import { ProjectorThread } from '../../src/app/projector-thread/projector-thread';
import { ALL_PROJECTIONS } from '../../projections';
import { ChatkitWebhookReceiver } from '../support/chatkit-webhook-receiver';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

/** PROJECTOR_THREAD=true: the embedded server folds its projections on a worker thread of its own. */
describe('the projector thread (PROJECTOR_THREAD=true)', () => {
  let s: TestServer;
  let thread: ProjectorThread;
  beforeAll(async () => {
    s = await startTestServer({ env: { PROJECTOR_THREAD: 'true', METRICS_TOKEN: 'scrape' }, projectorThreadTestHooks: true });
    thread = s.runtime.runner as ProjectorThread;
  });
  afterAll(() => s.close());

  const createUser = (id: string) => s.request('POST', s.chat('/users'), { body: { id, name: `Name ${id}` } });

  it('folds every projection on a thread other than the request thread', async () => {
    expect(thread).toBeInstanceOf(ProjectorThread);
    expect(thread.threadId).not.toBeNull();
    expect(thread.threadId).not.toBe(threadId);
    expect(thread.running).toHaveLength(ALL_PROJECTIONS.length);
    expect(thread.status().map((p) => p.state)).toEqual(ALL_PROJECTIONS.map(() => 'running'));
  });

  it('reads a write back at once: a created user, a room and a message are there in the next read', async () => {
    expect((await createUser('ana')).status).toBe(201);
    expect((await s.request('GET', s.chat('/users/ana'))).body).toMatchObject({ id: 'ana', name: 'Name ana' });
    const room = await s.request('POST', s.chat('/rooms'), { body: { name: 'lobby' }, token: s.token({ sub: 'ana' }) });
    expect(room.status).toBe(201);
    const sent = await s.request('POST', s.chat(`/rooms/${room.body.id}/messages`), {
      body: { parts: [{ type: 'text/plain', content: 'hello from the request thread' }] },
      token: s.token({ sub: 'ana' }),
    });
    expect(sent.status).toBe(201);
    const listed = await s.request('GET', s.chat(`/rooms/${room.body.id}/messages`), { token: s.token({ sub: 'ana' }) });
    expect(listed.body.map((m: { id: number; parts: { content: string }[] }) => [m.id, m.parts[0].content])).toEqual([[sent.body.message_id, 'hello from the request thread']]);
  });

  it("counts the thread's batches in the server's /metrics", async () => {
    const scraped = await s.request('GET', '/metrics', { token: null, headers: { authorization: 'Bearer scrape' } });
    expect(scraped.status).toBe(200);
    const batches = Number(/^parley_projector_batch_events_count (\d+)$/m.exec(scraped.text)?.[1]);
    expect(batches).toBeGreaterThan(0);
  });

  it('restarts a thread that crashed, from its checkpoints: writes made meanwhile and before are all read back', async () => {
    const before = thread.threadId;
    expect((await createUser('before-crash')).status).toBe(201);
    thread.crashForTest();
    // Writes go on meanwhile: answered once durable (their reads wait for the new thread or the stored checkpoints).
    const during = await Promise.all(['during-1', 'during-2', 'during-3'].map(createUser));
    expect(during.map((r) => r.status)).toEqual([201, 201, 201]);
    await eventually(() => thread.threadId !== before && thread.status().every((p) => p.state === 'running'), { what: 'a new projector thread' });
    expect((await createUser('after-crash')).status).toBe(201);
    for (const id of ['ana', 'before-crash', 'during-1', 'during-2', 'during-3', 'after-crash']) {
      const got = await s.request('GET', s.chat(`/users/${id}`));
      expect([id, got.status]).toEqual([id, 200]);
    }
    const health = await s.request('GET', '/health', { token: null });
    expect(health.status).toBe(200);
  });
});

/**
 * The embedded server delivers its webhooks on the projector thread, off the request thread
 * (issue 20: a send is not slowed by webhooks); presence, which lives on the request thread, is
 * asked of it for who was offline.
 */
describe('webhooks on the projector thread (PROJECTOR_THREAD=true)', () => {
  let s: TestServer;
  let thread: ProjectorThread;
  let receiver: ChatkitWebhookReceiver;
  const secret = 'projector thread webhook secret';
  // A generous correctness bound, not a timing assertion.
  const patience = { timeoutMs: 30_000, everyMs: 50 };
  beforeAll(async () => {
    receiver = await ChatkitWebhookReceiver.start({ secret });
    s = await startTestServer({ env: { PROJECTOR_THREAD: 'true', WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` }, projectorThreadTestHooks: true });
    thread = s.runtime.runner as ProjectorThread;
    const created = await s.request('POST', `/services/parley_webhooks/v1/${s.instanceId}/webhooks`, { body: { url: receiver.url, secret } });
    expect(created.status).toBe(201);
    for (const id of ['ann', 'ben']) expect((await s.request('POST', s.chat('/users'), { body: { id, name: id.toUpperCase() } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'hall', name: 'Hall', user_ids: ['ann', 'ben'] }, token: s.token({ sub: 'ann' }) })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await receiver?.stop();
  });

  const send = async (content: string) => {
    const sent = await s.request('POST', s.chat('/rooms/hall/messages'), { body: { parts: [{ type: 'text/plain', content }] }, token: s.token({ sub: 'ann' }) });
    expect(sent.status).toBe(201);
    return sent.body.message_id as number;
  };
  const delivered = async (messageId: number) => {
    const created = await receiver.ofType('v1.messages_created', (r) => r.event!.payload.messages[0].id === messageId, patience);
    const offline = await receiver.ofType('v1.message_sent_user_offline', (r) => r.event!.payload.message.id === messageId, patience);
    return { created: created.event!.payload, offline: offline.event!.payload };
  };

  it('delivers them from the thread, with who was offline told by the request thread', async () => {
    await eventually(() => thread.deliversWebhooks, { what: 'deliveries on the projector thread' });
    const id = await send('hello from the request thread');
    const { created, offline } = await delivered(id);
    expect(created.messages[0]).toMatchObject({ id, user_id: 'ann', room_id: 'hall', parts: [{ type: 'text/plain', content: 'hello from the request thread' }] });
    expect(offline).toMatchObject({ message: { id }, sender: { id: 'ann' }, room: { id: 'hall' }, offline_user_ids: ['ben'] });
  });

  it('a thread started after a crash delivers them again, nothing lost', async () => {
    const before = thread.threadId;
    thread.crashForTest();
    const during = await send('sent while the thread restarts');
    await eventually(() => thread.threadId !== before && thread.deliversWebhooks, { what: 'deliveries on a new projector thread' });
    const after = await send('sent after the restart');
    for (const id of [during, after]) expect((await delivered(id)).created.messages[0].id).toBe(id);
  });
});
