import { JSDOM, VirtualConsole } from 'jsdom';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

/** The unmodified pusher-feeds-server 0.7.0 (no typings). */
const FeedsServer: any = require('pusher-feeds-server');
/** The unmodified pusher-feeds-client 0.9.1 browser bundle, evaluated inside a jsdom window. */
const FEEDS_CLIENT_BUNDLE = readFileSync(require.resolve('pusher-feeds-client'), 'utf8');

const TIMEOUT_MS = 15_000;

/** Resolves once `check` holds, polling the values callbacks collected (no timing asserted; bounded for failures). */
const until = (what: string, check: () => boolean) => eventually(check, { what, timeoutMs: TIMEOUT_MS });

/**
 * pusher-feeds-server 0.7.0 (node; its port set on the private client field as wire study §8
 * shows) publishes, pages and deletes; pusher-feeds-client 0.9.1 runs in a jsdom window on the
 * server's HTTPS origin, subscribing over HTTP SUBSCRIBE streamed through jsdom's XHR. Private
 * feeds get their tokens from an app auth endpoint this test runs, which calls the server
 * SDK's `authorizeFeed` (and `authorizePath` for the list and the firehose).
 */
describe('pusher-feeds-server 0.7.0 and pusher-feeds-client 0.9.1 against the server', () => {
  let s: TestServer;
  let feeds: any;
  let authApp: http.Server;
  let authUrl: string;
  /** Feed ids the app's permission callback allows; requests it saw. */
  const allowedFeeds = new Set<string>();
  const tokenRequests: Record<string, string>[] = [];
  const windows: JSDOM[] = [];

  /** A fresh window on the server's origin with a Feeds client constructed in it. */
  const browserFeeds = () => {
    const virtualConsole = new VirtualConsole();
    const dom = new JSDOM('<!doctype html><html><body></body></html>', {
      url: `https://localhost:${s.httpsPort}/`,
      runScripts: 'outside-only',
      virtualConsole,
    });
    windows.push(dom);
    const window = dom.window as any;
    window.eval(FEEDS_CLIENT_BUNDLE);
    return new window.Feeds({ instanceId: s.locator, host: `localhost:${s.httpsPort}`, authEndpoint: authUrl, logger: quietLogger });
  };
  const quietLogger = { verbose() {}, debug() {}, info() {}, warn() {}, error() {} };

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    feeds = FeedsServer({ instanceId: s.locator, key: `${s.keyId}:${s.secret}`, host: 'localhost' });
    feeds.pusherInstance.client.port = s.httpsPort;
    // The app's token route (README of feeds-server, with req.body as it must be): a form body in, 200 JSON out.
    authApp = http.createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const payload = Object.fromEntries(new URLSearchParams(text));
        tokenRequests.push(payload);
        const answer = /^feeds\/[a-zA-Z0-9-]+\/items$/.test(payload.path ?? '')
          ? feeds.authorizeFeed(payload, (_action: string, feedId: string) => allowedFeeds.has(feedId))
          : feeds.authorizePath(payload, () => true);
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
          res.end(JSON.stringify(body));
        };
        answer.then(
          (token: unknown) => send(200, token),
          (error: Error) => send(403, { error: 'forbidden', error_description: error.message }),
        );
      });
    });
    await new Promise<void>((resolve) => authApp.listen(0, '127.0.0.1', resolve));
    authUrl = `http://127.0.0.1:${(authApp.address() as AddressInfo).port}/feeds/tokens`;
  });
  afterEach(() => {
    // Closing the windows aborts their XHRs, so no subscription outlives its test.
    for (const dom of windows.splice(0)) dom.window.close();
  });
  afterAll(async () => {
    await new Promise((resolve) => authApp?.close(resolve));
    await s?.close();
  });

  it('publish and publishBatch keep array order; paginate pages newest first through next_cursor (both SDKs)', async () => {
    const first = await feeds.publish('news', { n: 0 });
    expect(first).toEqual({ item_ids: ['1'] });
    await feeds.publishBatch('news', [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);

    const serverPage = await feeds.paginate('news', { limit: 2 });
    expect(serverPage).toMatchObject({ items: [{ id: '5', data: { n: 4 } }, { id: '4', data: { n: 3 } }], next_cursor: '3', remaining: 3 });

    const feed = browserFeeds().feed('news');
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await feed.paginate({ cursor, limit: 2 });
      pages.push(page.items.map((i: any) => `${i.id}:${i.data.n}`));
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    expect(pages).toEqual([['5:4', '4:3'], ['3:2', '2:1'], ['1:0']]);
    expect((await feed.paginate()).items).toHaveLength(5); // limit 50 by default
  });

  it('delete removes every item (resolves ""); the next publish continues the ids', async () => {
    await feeds.publishBatch('wiped', ['a', 'b']);
    expect(await feeds.delete('wiped')).toBe('');
    expect(await feeds.paginate('wiped')).toEqual({ items: [], next_cursor: null, remaining: 0 });
    expect(await feeds.publish('wiped', 'c')).toEqual({ item_ids: ['3'] });
  });

  it('subscribe: onOpen, previousItems oldest first, then live items in publish order; resume by lastItemId', async () => {
    await feeds.publishBatch('live', ['a', 'b', 'c']);
    const client = browserFeeds();
    const opened: any[] = [];
    const items: any[] = [];
    const errors: unknown[] = [];
    const subscription = client.feed('live').subscribe({
      previousItems: 2,
      onOpen: (data: any) => opened.push(data),
      onItem: (item: any) => items.push(item),
      onError: (error: unknown) => errors.push(error),
    });
    await until('the replayed items', () => items.length >= 2);
    expect(opened).toEqual([{ next_cursor: '1', remaining: 1 }]);
    await feeds.publish('live', 'd');
    await feeds.publishBatch('live', ['e', 'f', 'g']);
    await until('the live items', () => items.length >= 6);
    expect(items.map((i) => `${i.id}:${i.data}`)).toEqual(['2:b', '3:c', '4:d', '5:e', '6:f', '7:g']);
    expect(items[0]).toEqual({ id: '2', created: expect.any(Number), data: 'b' });
    subscription.unsubscribe();
    expect(errors).toEqual([]);

    const resumed: any[] = [];
    browserFeeds().feed('live').subscribe({ lastItemId: '5', onItem: (item: any) => resumed.push(item) });
    await until('the items after 5', () => resumed.length >= 2);
    await feeds.publish('live', 'h');
    await until('the next live item', () => resumed.length >= 3);
    expect(resumed.map((i) => i.id)).toEqual(['6', '7', '8']);
  });

  it('private feeds: read through the app auth endpoint (authorizeFeed); a feed the app denies is not read; a token for another feed gets 403', async () => {
    await feeds.publish('private-team', { secret: 1 });
    await feeds.publish('private-other', { secret: 2 });
    allowedFeeds.add('private-team');
    const client = browserFeeds();
    const page = await client.feed('private-team').paginate();
    expect(page.items.map((i: any) => i.data)).toEqual([{ secret: 1 }]);
    expect(tokenRequests).toContainEqual({ path: 'feeds/private-team/items', action: 'READ', grant_type: 'client_credentials' });

    const items: any[] = [];
    client.feed('private-team').subscribe({ previousItems: 5, onItem: (item: any) => items.push(item) });
    await until('the private item', () => items.length >= 1);
    await feeds.publish('private-team', { secret: 3 });
    await until('the live private item', () => items.length >= 2);
    expect(items.map((i) => i.data)).toEqual([{ secret: 1 }, { secret: 3 }]);

    // The app refuses: the token request fails, so the read does.
    await expect(client.feed('private-other').paginate()).rejects.toThrow(/Couldn't fetch token/);

    // A valid token for another feed is refused with 403 (a 401 would make the client retry at once, forever).
    const wrong = await feeds.authorizeFeed({ path: 'feeds/private-team/items', action: 'READ', grant_type: 'client_credentials' }, () => true);
    expect(wrong).toMatchObject({ token_type: 'bearer', expires_in: 86400 });
    const res = await s.request('GET', `/services/feeds/v1/${s.instanceId}/feeds/private-other/items`, { token: wrong.access_token });
    expect([res.status, res.body.error]).toEqual([403, 'services/feeds/forbidden/permission_denied']);
  });

  it('list and firehose through tokens from the app (authorizePath)', async () => {
    await feeds.publish('shelf-a', 1);
    await feeds.publish('shelf-b', 2);
    const client = browserFeeds();
    expect(await client.list({ prefix: 'shelf-' })).toEqual([
      { id: 'shelf-a', item_count: 1 },
      { id: 'shelf-b', item_count: 1 },
    ]);
    const published: any[] = [];
    const subscribed: any[] = [];
    let open = false;
    client.firehose({ onOpen: () => (open = true), onPublish: (e: any) => published.push(e), onSubscribe: (e: any) => subscribed.push(e) });
    await until('the firehose to open', () => open);
    browserFeeds().feed('shelf-a').subscribe({ onItem: () => undefined });
    await until('the subscribe event', () => subscribed.length >= 1);
    expect(subscribed[0]).toEqual({ feed_id: 'shelf-a' });
    await feeds.publish('shelf-b', 3);
    await until('the publish event', () => published.length >= 1);
    expect(published[0]).toEqual({ feed_id: 'shelf-b', items: [{ id: '2', created: expect.any(Number), data: 3 }] });
  });
});
