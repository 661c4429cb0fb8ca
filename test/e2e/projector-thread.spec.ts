import { threadId } from 'node:worker_threads';
import { ProjectorThread } from '../../src/app/projector-thread/projector-thread';
import { ALL_PROJECTIONS } from '../../projections';
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
