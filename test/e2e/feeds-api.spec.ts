import { JSDOM, VirtualConsole } from 'jsdom';
import jwt from 'jsonwebtoken';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { openHttpSubscription, openWsSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

/**
 * The Feeds v1 HTTP API and its subscriptions over raw HTTP and /ws (the SDKs are driven in
 * feeds-sdk.spec.ts): tokens as pusher-feeds-server mints them (wire study §5.3), paging
 * arithmetic, resumption, the firehose, and bad input answered 4xx with a JSON error.
 */
describe('Feeds v1 API (raw HTTP)', () => {
  let s: TestServer;
  /** A Feeds token: `app` claim, backdated `iat`, `feeds.permission` (the server SDK's is `*`/`*`). */
  const feedsToken = (path = '*', action = '*', claims: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return jwt.sign(
      { app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: now - 600, exp: now + 86400 - 600, feeds: { permission: { path, action } }, ...claims },
      s.secret,
    );
  };
  const feeds = (path: string) => `/services/feeds/v1/${s.instanceId}${path}`;
  const publish = async (feed: string, items: unknown[]) => {
    const res = await s.request('POST', feeds(`/feeds/${feed}/items`), { body: { items }, token: feedsToken() });
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return res.body.item_ids as string[];
  };
  const expectError = (res: { status: number; body: any }, status: number, error: string) => {
    expect({ status: res.status, error: res.body?.error }).toEqual({ status, error: `services/feeds/${error}` });
    expect(typeof res.body.error_description).toBe('string');
  };

  beforeAll(async () => {
    s = await startTestServer({ https: true });
  });
  afterAll(() => s?.close());

  it('publishes in array order with increasing string ids, and pages newest first with next_cursor and remaining', async () => {
    expect(await publish('paged', ['a'])).toEqual(['1']);
    expect(await publish('paged', ['b', 'c', 'd', 'e'])).toEqual(['2', '3', '4', '5']);
    const page1 = await s.request('GET', feeds('/feeds/paged/items?limit=2'), { token: null });
    expect(page1.status).toBe(200);
    expect(page1.body).toEqual({
      items: [
        { id: '5', created: expect.any(Number), data: 'e' },
        { id: '4', created: expect.any(Number), data: 'd' },
      ],
      next_cursor: '3',
      remaining: 3,
    });
    const page2 = await s.request('GET', feeds('/feeds/paged/items?cursor=3&limit=2'), { token: null });
    expect(page2.body).toMatchObject({ items: [{ id: '3' }, { id: '2' }], next_cursor: '1', remaining: 1 });
    const page3 = await s.request('GET', feeds('/feeds/paged/items?cursor=1&limit=2'), { token: null });
    expect(page3.body).toMatchObject({ items: [{ id: '1', data: 'a' }], next_cursor: null, remaining: 0 });
    // The default page size is 50.
    const all = await s.request('GET', feeds('/feeds/paged/items'), { token: null });
    expect(all.body.items.map((i: any) => i.id)).toEqual(['5', '4', '3', '2', '1']);
  });

  it('deletes every item; ids go on above the deleted ones; an unknown feed is an empty page', async () => {
    await publish('gone', [1, 2]);
    const del = await s.request('DELETE', feeds('/feeds/gone/items'), { token: feedsToken() });
    expect(del.status).toBe(200);
    expect((await s.request('GET', feeds('/feeds/gone/items'), { token: null })).body).toEqual({ items: [], next_cursor: null, remaining: 0 });
    expect(await publish('gone', [3])).toEqual(['3']);
    expect((await s.request('GET', feeds('/feeds/never-published/items'), { token: null })).body).toEqual({ items: [], next_cursor: null, remaining: 0 });
  });

  it('lists non-empty feeds by prefix with a token for "feeds"', async () => {
    await publish('listed-b', [1]);
    await publish('listed-a', [1, 2]);
    await publish('listed-empty', [1]);
    await s.request('DELETE', feeds('/feeds/listed-empty/items'), { token: feedsToken() });
    const res = await s.request('GET', feeds('/feeds?prefix=listed-'), { token: feedsToken('feeds', 'READ') });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: 'listed-a', item_count: 2 },
      { id: 'listed-b', item_count: 1 },
    ]);
    expect((await s.request('GET', feeds('/feeds?prefix=listed-&limit=1'), { token: feedsToken() })).body).toHaveLength(1);
    expectError(await s.request('GET', feeds('/feeds'), { token: null }), 401, 'unauthorized/missing_token');
    expectError(await s.request('GET', feeds('/feeds'), { token: feedsToken('feeds/x/items', 'READ') }), 403, 'forbidden/permission_denied');
  });

  it('private feeds: no token or an expired one 401, a token for another feed or one no retry can fix 403, its own token or the server token 200', async () => {
    await publish('private-mine', ['secret']);
    const path = feeds('/feeds/private-mine/items');
    expectError(await s.request('GET', path, { token: null }), 401, 'unauthorized/missing_token');
    expectError(await s.request('GET', path, { token: feedsToken('feeds/private-other/items', 'READ') }), 403, 'forbidden/permission_denied');
    expect((await s.request('GET', path, { token: feedsToken('feeds/private-mine/items', 'READ') })).status).toBe(200);
    expect((await s.request('GET', path, { token: feedsToken() })).status).toBe(200);
    // A path ending in * covers what starts with the rest.
    expect((await s.request('GET', path, { token: feedsToken('feeds/private-*', 'READ') })).status).toBe(200);
    expectError(await s.request('GET', path, { token: feedsToken('feeds/public-*', 'READ') }), 403, 'forbidden/permission_denied');
    // A read token does not publish; a chat token (instance claim, no app) is no Feeds token.
    expectError(
      await s.request('POST', path, { body: { items: [1] }, token: feedsToken('feeds/private-mine/items', 'READ') }),
      403,
      'forbidden/permission_denied',
    );
    expectError(await s.request('POST', path, { body: { items: [1] }, token: s.token({ su: true }) }), 403, 'forbidden/invalid_token');
    // Only an expired token is a 401: feeds-client retries a 401 at once with its cached token, so
    // a token no retry can fix (another instance, unknown or disabled key, bad signature) is a 403.
    const expired = jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, exp: Math.floor(Date.now() / 1000) - 10, feeds: { permission: { path: '*', action: '*' } } }, s.secret);
    expectError(await s.request('GET', path, { token: expired }), 401, 'unauthorized/token_expired');
    expectError(await s.request('GET', path, { token: feedsToken('*', '*', { app: 'another' }) }), 403, 'forbidden/invalid_token');
    expectError(await s.request('GET', path, { token: feedsToken('*', '*', { iss: 'api_keys/no-such-key' }) }), 403, 'forbidden/invalid_token');
    expectError(await s.request('GET', path, { token: jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, exp: 9e9 }, 'wrong-secret') }), 403, 'forbidden/invalid_token');
    const noExp = jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, feeds: { permission: { path: '*', action: '*' } } }, s.secret);
    expectError(await s.request('GET', path, { token: noExp }), 403, 'forbidden/invalid_token');
    const unknownKey = await openHttpSubscription(s.baseUrl + feeds('/feeds/private-mine/items'), {
      authorization: `Bearer ${feedsToken('feeds/private-mine/items', 'READ', { iss: 'api_keys/no-such-key' })}`,
    });
    expect([unknownKey.status, unknownKey.body.error]).toEqual([403, 'services/feeds/forbidden/invalid_token']);
    const private403 = await openHttpSubscription(s.baseUrl + feeds('/feeds/private-mine/items'), {
      authorization: `Bearer ${feedsToken('feeds/private-other/items', 'READ')}`,
    });
    expect(private403.status).toBe(403);
    expect(private403.body.error).toBe('services/feeds/forbidden/permission_denied');
  });

  it('the unmodified pusher-feeds-client ends a subscription refused for a token signed with an unknown key (no retry loop)', async () => {
    await publish('private-keyed', ['x']);
    // The app's token endpoint signs with a key the instance does not have (deleted, disabled, mistyped).
    let tokenRequests = 0;
    const authApp = http.createServer((req, res) => {
      tokenRequests++;
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
        res.end(JSON.stringify({ access_token: feedsToken('feeds/private-keyed/items', 'READ', { iss: 'api_keys/no-such-key' }), token_type: 'bearer', expires_in: 86400 }));
      });
    });
    await new Promise<void>((resolve) => authApp.listen(0, '127.0.0.1', resolve));
    const dom = new JSDOM('<!doctype html><html><body></body></html>', {
      url: `https://localhost:${s.httpsPort}/`,
      runScripts: 'outside-only',
      virtualConsole: new VirtualConsole(),
    });
    try {
      const window = dom.window as any;
      window.eval(readFileSync(require.resolve('pusher-feeds-client'), 'utf8'));
      const quiet = { verbose() {}, debug() {}, info() {}, warn() {}, error() {} };
      const client = new window.Feeds({
        instanceId: s.locator,
        host: `localhost:${s.httpsPort}`,
        authEndpoint: `http://127.0.0.1:${(authApp.address() as AddressInfo).port}/feeds/tokens`,
        logger: quiet,
      });
      // With a 401 the client would retry at once with its cached token and never call onError.
      const refused = await new Promise<any>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the subscription was not ended with an error')), 5_000);
        client.feed('private-keyed').subscribe({ onError: (error: unknown) => (clearTimeout(timer), resolve(error)), onItem: () => reject(new Error('an item arrived')) });
      });
      expect(refused.statusCode).toBe(403);
      expect(JSON.parse(refused.info).error).toBe('services/feeds/forbidden/invalid_token');
      expect(tokenRequests).toBe(1);
    } finally {
      dom.window.close();
      await new Promise((resolve) => authApp.close(resolve));
    }
  });

  it('SUBSCRIBE: type 0 first, previous_items oldest first, then live items in order; resumes after Last-Event-Id', async () => {
    await publish('live', ['a', 'b', 'c']);
    const sub = await openHttpSubscription(s.baseUrl + feeds('/feeds/live/items?previous_items=2'));
    try {
      expect(sub.status).toBe(200);
      expect(await sub.nextEvent()).toEqual({ id: '1', headers: {}, body: { type: 0, data: { next_cursor: '1', remaining: 1 } } });
      expect((await sub.nextEvent()).body).toEqual({ type: 1, data: { id: '2', created: expect.any(Number), data: 'b' } });
      expect((await sub.nextEvent()).id).toBe('3');
      await publish('live', ['d', 'e']);
      await publish('live', ['f']);
      const live = [await sub.nextEvent(), await sub.nextEvent(), await sub.nextEvent()];
      expect(live.map((e) => [e.id, e.body.data.data])).toEqual([['4', 'd'], ['5', 'e'], ['6', 'f']]);
    } finally {
      await sub.close();
    }
    const resumed = await openHttpSubscription(s.baseUrl + feeds('/feeds/live/items'), { 'last-event-id': '4' });
    try {
      expect(await resumed.nextEvent()).toMatchObject({ id: '4', body: { type: 0, data: { next_cursor: '4', remaining: 4 } } });
      expect([(await resumed.nextEvent()).id, (await resumed.nextEvent()).id]).toEqual(['5', '6']);
    } finally {
      await resumed.close();
    }
    // An id above every item (from before an instance wipe restarted the ids) replays the feed as it is.
    const stale = await openHttpSubscription(s.baseUrl + feeds('/feeds/live/items'), { 'last-event-id': '99' });
    try {
      expect(await stale.nextEvent()).toMatchObject({ id: '0', body: { type: 0, data: { next_cursor: null, remaining: 0 } } });
      expect((await stale.nextEvent()).id).toBe('1');
    } finally {
      await stale.close();
    }
    // Without previous_items: nothing replayed, and the type 0 event's id is the newest item.
    const fresh = await openWsSubscription(s.baseUrl, feeds('/feeds/live/items'));
    try {
      expect(await fresh.nextEvent()).toMatchObject({ id: '6', body: { type: 0, data: { next_cursor: '6', remaining: 6 } } });
      await publish('live', ['g']);
      expect(await fresh.nextEvent()).toMatchObject({ id: '7', body: { type: 1, data: { id: '7', data: 'g' } } });
    } finally {
      await fresh.close();
    }
  });

  it('firehose: publishes of every feed, and feed subscriptions opening and closing', async () => {
    const firehose = await openHttpSubscription(s.baseUrl + feeds('/firehose/items'), {
      authorization: `Bearer ${feedsToken('firehose/items', 'READ')}`,
    });
    try {
      expect(firehose.status).toBe(200);
      const watcher = await openHttpSubscription(s.baseUrl + feeds('/feeds/hosed/items'));
      expect((await firehose.nextEvent()).body).toEqual({ type: 1, data: { feed_id: 'hosed' } });
      await publish('hosed', [{ x: 1 }, { x: 2 }]);
      expect((await firehose.nextEvent()).body).toEqual({
        type: 0,
        data: { feed_id: 'hosed', items: [{ id: '1', created: expect.any(Number), data: { x: 1 } }, { id: '2', created: expect.any(Number), data: { x: 2 } }] },
      });
      await watcher.close();
      expect((await firehose.nextEvent()).body).toEqual({ type: 2, data: { feed_id: 'hosed' } });
    } finally {
      await firehose.close();
    }
    const denied = await openHttpSubscription(s.baseUrl + feeds('/firehose/items'), { authorization: `Bearer ${feedsToken('feeds', 'READ')}` });
    expect(denied.status).toBe(403);
  });

  it('answers bad input with 4xx JSON errors', async () => {
    const server = { token: feedsToken() };
    expectError(await s.request('POST', feeds('/feeds/bad_id/items'), { body: { items: [1] }, ...server }), 400, 'bad_request/invalid_feed_id');
    expectError(await s.request('POST', feeds(`/feeds/${'x'.repeat(201)}/items`), { body: { items: [1] }, ...server }), 400, 'bad_request/invalid_feed_id');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: [1], ...server }), 400, 'bad_request/invalid_body');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: { items: 'x' }, ...server }), 400, 'bad_request/invalid_body');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { ...server }), 400, 'bad_request/invalid_body');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { rawBody: '{"items":', headers: { 'content-type': 'application/json' }, ...server }), 400, 'bad_request/invalid_json_body');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: { items: [] }, ...server }), 400, 'bad_request/no_items');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: { items: new Array(1001).fill(0) }, ...server }), 400, 'bad_request/too_many_items');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: { items: [1] }, token: null }), 401, 'unauthorized/missing_token');
    expectError(await s.request('POST', feeds('/feeds/ok/items'), { body: { items: [1] }, token: 'not-a-jwt' }), 403, 'forbidden/invalid_token');
    expectError(await s.request('GET', feeds('/feeds/ok/items?cursor=abc'), { token: null }), 422, 'unprocessable_entity/invalid_cursor');
    expectError(await s.request('GET', feeds('/feeds/ok/items?cursor=-1'), { token: null }), 422, 'unprocessable_entity/invalid_cursor');
    expectError(await s.request('GET', feeds('/feeds/ok/items?limit=0'), { token: null }), 422, 'unprocessable_entity/invalid_limit');
    expectError(await s.request('GET', feeds('/feeds?prefix=a_b'), { ...server }), 400, 'bad_request/invalid_prefix');
    expectError(await s.request('GET', '/services/feeds/v1/no-such-instance/feeds/ok/items', { token: null }), 404, 'not_found/instance_not_found');
    const badSubscribe = await openHttpSubscription(s.baseUrl + feeds('/feeds/ok/items?previous_items=many'));
    expect([badSubscribe.status, badSubscribe.body.error]).toEqual([422, 'services/feeds/unprocessable_entity/invalid_previous_items']);
    const noInstance = await openHttpSubscription(s.baseUrl + '/services/feeds/v1/no-such-instance/feeds/ok/items');
    expect([noInstance.status, noInstance.body.error]).toEqual([404, 'services/feeds/not_found/instance_not_found']);
    // Nothing was stored by any of the refused publishes.
    expect((await s.request('GET', feeds('/feeds/ok/items'), { token: null })).body.items).toEqual([]);
  });
});
