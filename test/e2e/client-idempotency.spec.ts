import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChatServer, Feeds, Room } from '../../src/client';
import { AnswerDroppingProxy, startAnswerDroppingProxy } from '../support/answer-dropping-proxy';
import { ServerProcess, startProcess } from '../support/server-process';

/**
 * Parley's client libraries against the real server (dist/) through a proxy that loses the
 * server's answer after the server handled the request (test/support/answer-dropping-proxy.ts):
 * the library retries with the write's `Idempotency-Key`, and the server answers the retry with
 * the first answer instead of making the change again. One message, with the id the lost
 * answer carried; one user, one room, one feed item.
 */
const instance = 'retrying';
const key = 'k:client-retry-secret';

/* eslint-disable @typescript-eslint/no-explicit-any */
describe('client libraries retry writes whose answer was lost: the real server applies each once', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-client-idem-'));
  let server: ServerProcess;
  let proxy: AnswerDroppingProxy;
  /** Through the proxy (answers get lost), and straight to the server (to look). */
  let chat: ChatServer;
  let direct: ChatServer;
  let feeds: Feeds;
  let directFeeds: Feeds;
  let general: Room;

  beforeAll(async () => {
    server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: key });
    proxy = await startAnswerDroppingProxy(server.port);
    const options = { instanceLocator: `v1:local:${instance}`, key, host: '127.0.0.1', tls: false };
    chat = new ChatServer({ ...options, port: proxy.port });
    feeds = new Feeds({ ...options, port: proxy.port });
    direct = new ChatServer({ ...options, port: server.port, retry: { retries: 0 } });
    directFeeds = new Feeds({ ...options, port: server.port, retry: { retries: 0 } });
    await direct.createUser({ id: 'alice', name: 'Alice' });
    general = await direct.createRoom({ creatorId: 'alice', name: 'general' });
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const su = () => direct.generateAccessToken({ su: true }).token;
  const get = async (path: string): Promise<any> => {
    const res = await fetch(`http://127.0.0.1:${server.port}/services/chatkit/v6/${instance}${path}`, { headers: { authorization: `Bearer ${su()}` } });
    expect(res.status).toBe(200);
    return res.json();
  };

  it('a user created, and a room created, whose answers were lost: one of each, answered as the first time', async () => {
    proxy.dropNext((method, path) => method === 'POST' && path.endsWith('/users'));
    const carol = await chat.createUser({ id: 'carol', name: 'Carol' });
    const lostUser = proxy.lost.at(-1)!;
    expect(lostUser).toMatchObject({ method: 'POST', status: 201, idempotencyKey: expect.any(String) });
    expect(carol).toEqual(JSON.parse(lostUser.body));
    expect((await get('/users')).filter((u: any) => u.id === 'carol')).toHaveLength(1);

    proxy.dropNext((method, path) => method === 'POST' && path.endsWith('/rooms'));
    const room = await chat.createRoom({ creatorId: 'carol', name: 'lobby' });
    expect(room).toEqual(JSON.parse(proxy.lost.at(-1)!.body));
    const rooms = await get('/rooms');
    expect(rooms.filter((r: any) => r.name === 'lobby').map((r: any) => r.id)).toEqual([room.id]);
  });

  it('a send whose answer was lost: one message, with the id the lost answer carried', async () => {
    const room = general;
    proxy.dropNext((method, path) => method === 'POST' && path.endsWith('/messages'));
    const sent = await chat.sendSimpleMessage({ roomId: room.id, userId: 'alice', text: 'exactly once' });
    const lost = proxy.lost.at(-1)!;
    expect(lost.path).toMatch(/\/messages$/);
    expect(sent).toEqual(JSON.parse(lost.body));
    const messages = await direct.fetchMultipartMessages({ roomId: room.id, limit: 100 });
    expect(messages.map((m) => [m.id, m.parts[0].content])).toEqual([[sent.message_id, 'exactly once']]);
  });

  it('a feed publish whose answer was lost: one item, with the ids the lost answer carried', async () => {
    proxy.dropNext((method, path) => method === 'POST' && path.endsWith('/items'));
    const published = await feeds.publishBatch('news', [{ headline: 'one' }, { headline: 'two' }]);
    expect(published).toEqual(JSON.parse(proxy.lost.at(-1)!.body));
    const page = await directFeeds.paginate('news');
    expect(page.items.map((i) => [i.id, (i.data as any).headline])).toEqual([
      [published.item_ids[1], 'two'],
      [published.item_ids[0], 'one'],
    ]);
  });

  it('a user deleted whose answer was lost: the retry is answered as the delete was, not 404', async () => {
    await direct.createUser({ id: 'bob', name: 'Bob' });
    proxy.dropNext((method, path) => method === 'DELETE' && path.endsWith('/users/bob'));
    await expect(chat.deleteUser({ userId: 'bob' })).resolves.toBeUndefined();
    expect(proxy.lost.at(-1)).toMatchObject({ method: 'DELETE', status: expect.any(Number) });
    expect(proxy.lost.at(-1)!.status).toBeLessThan(300);
    await expect(direct.getUser({ id: 'bob' })).rejects.toMatchObject({ status: 404 });
  });

  it("the same write twice at once with the caller's key (a job run twice): one message, both calls answered with its id", async () => {
    const send = () => chat.sendSimpleMessage({ roomId: general.id, userId: 'alice', text: 'job 7', idempotencyKey: 'job-7' });
    const [a, b] = await Promise.all([send(), send()]);
    expect(b).toEqual(a);
    const messages = await direct.fetchMultipartMessages({ roomId: general.id, limit: 100 });
    expect(messages.filter((m) => m.parts[0].content === 'job 7').map((m) => m.id)).toEqual([a.message_id]);
  });
});
