/**
 * Caps on what one caller holds open: subscriptions per connection (a /ws socket multiplexes
 * many) and per user across connections, and subscriptions without a token (public feeds) per
 * connection and per client address. A subscription over a cap is refused in the protocol the
 * SDKs read — an end-of-stream frame with 429 on /ws, a 429 answer to SUBSCRIBE — and nothing
 * else changes: the socket and the subscriptions already open keep running.
 */
import { loadConfig } from '../../src/config/config';
import { FrameQueue, openHttpSubscription, WsBridgeClient, WsFrame, wsUrlOf } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('subscription caps', () => {
  let s: TestServer;
  const sockets: WsBridgeClient[] = [];
  const presence = (user: string) => `/services/chatkit_presence/v2/${s.instanceId}/users/${user}`;
  const feed = (id: string) => `/services/feeds/v1/${s.instanceId}/feeds/${id}/items`;
  const bearer = (sub: string) => ({ Authorization: `Bearer ${s.token({ sub })}` });
  const connect = async () => {
    const client = await WsBridgeClient.connect(wsUrlOf(s.baseUrl));
    sockets.push(client);
    return client;
  };
  /** Subscribes and waits for the first frame: `[101, …]` when open, `[199, …]` when refused. */
  const subscribe = async (client: WsBridgeClient, subId: number, path: string, headers: Record<string, string> = {}) => {
    const queue = client.subscribe(subId, path, headers);
    return { queue, first: await queue.next() };
  };
  const opened = (frame: WsFrame) => expect(frame).toEqual([101, expect.any(Number), 200, {}]);
  const refused = (frame: WsFrame, service: string, what: RegExp) =>
    expect(frame).toEqual([
      199,
      expect.any(Number),
      429,
      {},
      { error: `services/${service}/too_many_requests/too_many_subscriptions`, error_description: expect.stringMatching(what) },
    ]);

  beforeAll(async () => {
    s = await startTestServer({
      env: { SUBSCRIPTIONS_PER_CONNECTION: '5', SUBSCRIPTIONS_PER_USER: '8', ANONYMOUS_SUBSCRIPTIONS_PER_CONNECTION: '3', ANONYMOUS_SUBSCRIPTIONS_PER_ADDRESS: '4' },
    });
    for (const id of ['ann', 'bob', 'cat']) expect((await s.request('POST', s.chat('/users'), { body: { id, name: id } })).status).toBe(201);
  });
  afterEach(async () => {
    await Promise.all(sockets.splice(0).map((client) => client.close()));
  });
  afterAll(() => s.close());

  it('refuses a subscription past the cap of one connection with a 429 end-of-stream frame; the socket and the others go on', async () => {
    const client = await connect();
    const open: FrameQueue<WsFrame>[] = [];
    for (let id = 0; id < 5; id++) {
      const { queue, first } = await subscribe(client, id, presence('bob'), bearer('ann'));
      opened(first);
      open.push(queue);
    }
    refused((await subscribe(client, 5, presence('bob'), bearer('ann'))).first, 'chatkit_presence', /^More than 5 open subscriptions on one connection/);
    // What was open still hears: bob comes online, every one of ann's watches is told.
    const bobs = await connect();
    opened((await subscribe(bobs, 0, `${presence('bob')}/register`, bearer('bob'))).first);
    for (const queue of open) {
      for (;;) {
        const frame = await queue.next();
        if (frame[0] === 102 && frame[4].data?.state === 'online') break;
      }
    }
    // A place given back is taken again.
    client.unsubscribe(0);
    opened((await subscribe(client, 6, presence('bob'), bearer('ann'))).first);
  });

  it('counts one user\'s subscriptions across connections, /ws and HTTP SUBSCRIBE alike, and no other user\'s', async () => {
    const first = await connect();
    const second = await connect();
    for (let id = 0; id < 5; id++) opened((await subscribe(first, id, presence('bob'), bearer('cat'))).first);
    for (let id = 0; id < 2; id++) opened((await subscribe(second, id, presence('bob'), bearer('cat'))).first);
    const http = await openHttpSubscription(`${s.baseUrl}${presence('bob')}`, bearer('cat'));
    try {
      expect(http.status).toBe(200);
      // The ninth of cat's, on a connection with room to spare.
      refused((await subscribe(second, 2, presence('bob'), bearer('cat'))).first, 'chatkit_presence', /^More than 8 open subscriptions for one user/);
      const overHttp = await openHttpSubscription(`${s.baseUrl}${presence('bob')}`, bearer('cat'));
      expect(overHttp.status).toBe(429);
      expect(overHttp.body).toEqual({ error: 'services/chatkit_presence/too_many_requests/too_many_subscriptions', error_description: expect.stringContaining('for one user') });
      // Another user on the same connection is not counted with cat.
      opened((await subscribe(second, 3, presence('bob'), bearer('ann'))).first);
    } finally {
      await http.close();
    }
    // Closing a socket gives its places back.
    await first.close();
    const third = await connect();
    for (;;) {
      const { first: frame } = await subscribe(third, Date.now(), presence('bob'), bearer('cat'));
      if (frame[0] === 101) break;
      // The server may not have heard the close yet: try again (a 429 changes nothing).
      refused(frame, 'chatkit_presence', /for one user/);
    }
  });

  it('caps subscriptions without a token per connection and per client address', async () => {
    const client = await connect();
    for (let id = 0; id < 3; id++) opened((await subscribe(client, id, feed(`news-${id}`))).first);
    refused((await subscribe(client, 3, feed('news-3'))).first, 'feeds', /^More than 3 open subscriptions without an access token on one connection/);
    // The connection's own cap (5) still has room for a user's subscription.
    opened((await subscribe(client, 4, presence('bob'), bearer('bob'))).first);
    // The address holds 3: one more over HTTP SUBSCRIBE, then the address's cap.
    const fourth = await openHttpSubscription(`${s.baseUrl}${feed('news-4')}`);
    try {
      expect(fourth.status).toBe(200);
      const fifth = await openHttpSubscription(`${s.baseUrl}${feed('news-5')}`);
      expect(fifth.status).toBe(429);
      expect(fifth.body).toEqual({
        error: 'services/feeds/too_many_requests/too_many_subscriptions',
        error_description: expect.stringMatching(/^More than 4 open subscriptions without an access token from one address/),
      });
    } finally {
      await fourth.close();
    }
  });
});

describe('subscription caps by default', () => {
  it('are 2,000 per connection and 4,000 per user, 100 per connection and 1,000 per address without a token', () => {
    expect(loadConfig({}).subscriptionCaps).toEqual({ perConnection: 2_000, perUser: 4_000, anonymousPerConnection: 100, anonymousPerAddress: 1_000 });
    expect(() => loadConfig({ SUBSCRIPTIONS_PER_USER: 'many' })).toThrow(/^SUBSCRIPTIONS_PER_USER must be a whole number of subscriptions from 0 to/);
  });

  it('refuse the 101st public-feed subscription on one socket without a token', async () => {
    const s = await startTestServer();
    const client = await WsBridgeClient.connect(wsUrlOf(s.baseUrl));
    try {
      const queues = Array.from({ length: 101 }, (_, id) => client.subscribe(id, `/services/feeds/v1/${s.instanceId}/feeds/f${id}/items`));
      const firsts = await Promise.all(queues.map((queue) => queue.next()));
      expect(firsts.filter((frame) => frame[0] === 101)).toHaveLength(100);
      expect(firsts.filter((frame) => frame[0] === 199).map((frame) => frame[2])).toEqual([429]);
    } finally {
      await client.close();
      await s.close();
    }
  });
});
