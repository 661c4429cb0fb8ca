import jwt from 'jsonwebtoken';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { eventRowsOf } from '../support/event-log-rows';
import { startProcess, ServerProcess } from '../support/server-process';
import { openHttpSubscription, openWsSubscription, WsBridgeClient } from '../support/subscribe-client';
import { sleep } from '../support/waiting';

const instance = 'observed';
const secret = 'observed-key-secret';
const METRICS_TOKEN = 'scrape-token-5f1c2a9e';
/** The built audit CLI (what `npm run audit` runs) as a process of its own, beside the running server. */
const audit = (dataDir: string, ...argv: string[]) => {
  const ran = spawnSync(process.execPath, [join(__dirname, '..', '..', 'dist', 'src', 'cli', 'audit.js'), ...argv], {
    env: { ...process.env, DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  return { code: ran.status, out: ran.stdout };
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const token = (claims: { sub?: string; su?: boolean }) =>
  jwt.sign({ instance, iss: 'api_keys/k', ...claims }, secret, { algorithm: 'HS256', expiresIn: 600 });

/** One sample of the Prometheus text: its value, or undefined when absent. */
const sample = (text: string, name: string, labels: Record<string, string> = {}): number | undefined => {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[4]);
  }
  return undefined;
};
/** Every sample of a metric, with its labels. */
const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => ({
      labels: Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]])),
      value: Number(line.slice(line.lastIndexOf(' ') + 1)),
    }));

describe('/metrics, the access log and request ids (a real server process)', () => {
  let dataDir: string;
  let server: ServerProcess;
  /** A server without METRICS_TOKEN. */
  let unguarded: ServerProcess;
  let unguardedDir: string;
  let base: string;
  /** Every JSON line the server process wrote to stdout. */
  const logLines: Record<string, any>[] = [];
  const rawStdout: string[] = [];
  const chat = (path: string) => `${base}/services/chatkit/v6/${instance}${path}`;
  const call = (method: string, path: string, options: { body?: unknown; requestId?: string } = {}) =>
    fetch(chat(path), {
      method,
      headers: {
        authorization: `Bearer ${token({ su: true })}`,
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
        ...(options.requestId !== undefined && { 'x-request-id': options.requestId }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  const scrape = (authorization?: string) => fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
  /** The access-log line of a request, once the server has written it. */
  const accessLine = async (requestId: string) => {
    for (let i = 0; i < 250; i++) {
      const line = logLines.find((l) => l.msg === 'request' && l.req_id === requestId);
      if (line) return line;
      await sleep(20);
    }
    throw new Error(`no access-log line for ${requestId}:\n${rawStdout.join('')}`);
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-metrics-'));
    unguardedDir = mkdtempSync(join(tmpdir(), 'parley-metrics-off-'));
    // Started together: a server start is most of this file's time.
    [server, unguarded] = await Promise.all([
      startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: `k:${secret}`, METRICS_TOKEN }),
      startProcess('dist/src/main.js', { DATA_DIR: unguardedDir }),
    ]);
    let partial = '';
    server.child.stdout!.on('data', (chunk) => {
      rawStdout.push(String(chunk));
      const lines = (partial + String(chunk)).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        try {
          logLines.push(JSON.parse(line));
        } catch {
          /* not a log line */
        }
      }
    });
    base = `http://127.0.0.1:${server.port}`;
  }, 30_000);
  afterAll(async () => {
    await Promise.all([server?.stop('SIGKILL'), unguarded?.stop('SIGKILL')]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(unguardedDir, { recursive: true, force: true });
  });

  it('takes a valid X-Request-Id, logs one access line with it, and stamps it on the events the audit CLI shows', async () => {
    const created = await call('POST', '/users', { body: { id: 'alice', name: 'Alice' }, requestId: 'e2e-create.alice_1' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('e2e-create.alice_1');

    const line = await accessLine('e2e-create.alice_1');
    expect(line).toMatchObject({
      level: 30,
      method: 'POST',
      route: '/services/chatkit/:version/:instanceId/users',
      status: 201,
      instance,
    });
    expect(typeof line.duration_ms).toBe('number');
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    expect(logLines.filter((l) => l.req_id === 'e2e-create.alice_1')).toHaveLength(1);

    const json = audit(dataDir, instance, 'user', 'alice', '--json');
    expect(json.code).toBe(0);
    const events = json.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(events.find((e) => e.type === 'UserCreated')?.request_id).toBe('e2e-create.alice_1');
    const text = audit(dataDir, instance, 'user', 'alice');
    expect(text.code).toBe(0);
    expect(text.out).toContain('request:     e2e-create.alice_1');
  });

  it('stamps the request id on Feeds and Beams writes too (their actors are not built from a chat token)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign(
      { app: instance, iss: 'api_keys/k', iat: now - 600, exp: now + 3600, feeds: { permission: { path: '*', action: '*' } } },
      secret,
      { algorithm: 'HS256' },
    );
    const published = await fetch(`${base}/services/feeds/v1/${instance}/feeds/news/items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${feedsToken}`, 'content-type': 'application/json', 'x-request-id': 'e2e-feed-publish' },
      body: JSON.stringify({ items: [{ headline: 'hello' }] }),
    });
    expect(published.status).toBe(200);
    const beams = await fetch(`${base}/publish_api/v1/instances/${instance}/publishes/interests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'x-request-id': 'e2e-beams-publish' },
      body: JSON.stringify({ interests: ['news'], web: { notification: { title: 'hi' } } }),
    });
    expect(beams.status).toBe(200);
    const deleted = await fetch(`${base}/user_api/v1/instances/${instance}/users/someone`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'e2e-beams-delete-user' },
    });
    expect(deleted.status).toBe(200);
    // Read back from the log itself (the audit CLI lists users, rooms and actors, not feeds or publishes).
    const requestIdOf = (type: string) => JSON.parse(eventRowsOf(join(dataDir, 'events.sqlite'), 'type = ?', type).pop()!.metadata).request_id;
    expect(requestIdOf('FeedItemsPublished')).toBe('e2e-feed-publish');
    expect(requestIdOf('BeamsPublishAccepted')).toBe('e2e-beams-publish');
    expect(requestIdOf('BeamsUserDeleted')).toBe('e2e-beams-delete-user');
  });

  it('generates a UUID when X-Request-Id is missing or not acceptable, and never logs tokens or queries', async () => {
    const missing = await call('GET', '/users/alice');
    expect(missing.status).toBe(200);
    const generated = missing.headers.get('x-request-id')!;
    expect(generated).toMatch(UUID);
    expect((await accessLine(generated)).route).toBe('/services/chatkit/:version/:instanceId/users/:userId');

    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const res = await call('GET', '/users/alice', { requestId: bad });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
    const notFound = await fetch(`${base}/nowhere?secret=hunter2`, { headers: { 'x-request-id': 'lost-1' } });
    expect(notFound.status).toBe(404);
    expect(await accessLine('lost-1')).toMatchObject({ route: 'unmatched', status: 404 });
    const everything = rawStdout.join('');
    expect(everything).not.toContain('hunter2');
    expect(everything).not.toContain('Bearer');
    expect(everything).not.toContain(secret);
  });

  it('logs a /ws connection and each subscription opened, refused and closed on it, without tokens or paths', async () => {
    expect((await call('POST', '/users', { body: { id: 'ws-watcher', name: 'Watcher' } })).status).toBe(201);
    const client = await WsBridgeClient.connect(`${base.replace(/^http/, 'ws')}/ws`, { 'x-request-id': 'e2e-ws-1' });
    const userToken = token({ sub: 'ws-watcher' });
    const opened = client.subscribe(1, `/services/chatkit/v6/${instance}/users`, { Authorization: `Bearer ${userToken}` });
    expect((await opened.next())[0]).toBe(101);
    const refused = client.subscribe(2, `/services/chatkit/v6/${instance}/rooms/secret-room-name?message_limit=5`, { Authorization: 'Bearer not-a-token' });
    expect(await refused.next()).toEqual([199, 2, 401, {}, expect.any(Object)]);
    client.unsubscribe(1);
    const subscriptionLines = async (count: number) => {
      for (let i = 0; i < 250; i++) {
        const lines = logLines.filter((l) => l.msg === 'subscription' && l.req_id === 'e2e-ws-1');
        if (lines.length >= count) return lines;
        await sleep(20);
      }
      throw new Error(`fewer than ${count} subscription lines:\n${rawStdout.join('')}`);
    };
    const lines = await subscriptionLines(3);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event: 'opened', sub_id: 1, route: '/services/chatkit/:version/:instanceId/users', status: 200, instance, duration_ms: expect.any(Number) }),
        expect.objectContaining({ event: 'refused', sub_id: 2, route: '/services/chatkit/:version/:instanceId/rooms/:roomId', status: 401, instance }),
        expect.objectContaining({ event: 'closed', sub_id: 1, closed_by: 'client', duration_ms: expect.any(Number) }),
      ]),
    );
    await client.close();
    const connection = await accessLine('e2e-ws-1');
    expect(connection).toMatchObject({ method: 'GET', route: '/ws', status: 101, subscriptions: 1, close_code: 1005, duration_ms: expect.any(Number) });
    const everything = rawStdout.join('');
    expect(everything).not.toContain(userToken);
    expect(everything).not.toContain('not-a-token');
    expect(everything).not.toContain('secret-room-name');
  });

  it('serves /metrics only with the METRICS_TOKEN, as Prometheus text', async () => {
    const none = await scrape();
    expect(none.status).toBe(401);
    expect((await none.json()).error).toBe('unauthorized/invalid_metrics_token');
    expect((await scrape('Bearer not-the-token')).status).toBe(401);
    expect((await scrape(METRICS_TOKEN)).status).toBe(401);
    const ok = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await scrape(`bearer ${METRICS_TOKEN}`)).status).toBe(200);
  });

  it('is not served at all without METRICS_TOKEN', async () => {
    const res = await fetch(`http://127.0.0.1:${unguarded.port}/metrics`, { headers: { authorization: 'Bearer anything' } });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toBe('not_found/metrics_disabled');
  });

  it('shows requests, appends, projection lag, open sockets and fan-out delivery after traffic', async () => {
    const made = 5;
    for (let i = 0; i < made; i++) expect((await call('POST', '/users', { body: { id: `u${i}`, name: 'U' } })).status).toBe(201);
    // A /ws subscription and an HTTP SUBSCRIBE stream stay open while the scrape runs.
    const ws = await openWsSubscription(base, `/services/chatkit/v6/${instance}/users`, { authorization: `Bearer ${token({ sub: 'alice' })}` });
    const http = await openHttpSubscription(chat('/users'), { authorization: `Bearer ${token({ sub: 'u0' })}` });
    try {
      expect(ws.status).toBe(200);
      expect(http.status).toBe(200);
      expect(http.headers.get('x-request-id')).toMatch(UUID);
      await ws.nextEvent(); // the initial state
      // A room with alice in it reaches her live subscription: one fan-out.
      expect((await call('POST', '/rooms', { body: { id: 'lobby', name: 'lobby', user_ids: ['alice'] } })).status).toBe(201);
      for (;;) if ((await ws.nextEvent()).body.event_name === 'added_to_room') break;

      const metrics = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
      const posts = sample(metrics, 'parley_http_requests_total', { method: 'POST', route: '/services/chatkit/:version/:instanceId/users', status: '201' });
      expect(posts).toBeGreaterThanOrEqual(made + 1);
      const total = samples(metrics, 'parley_http_requests_total').reduce((n, s) => n + s.value, 0);
      expect(total).toBeGreaterThanOrEqual(made + 8);
      // Route patterns, never raw URLs: no user id appears in a label.
      expect(samples(metrics, 'parley_http_requests_total').some((s) => /alice|u0|lobby/.test(s.labels.route))).toBe(false);
      expect(sample(metrics, 'parley_http_request_duration_seconds_count', { method: 'POST', route: '/services/chatkit/:version/:instanceId/users', status: '201' })).toBe(posts);
      expect(sample(metrics, 'parley_event_append_duration_seconds_count')).toBeGreaterThanOrEqual(made + 1);
      expect(sample(metrics, 'parley_event_append_batch_events_sum')).toBeGreaterThanOrEqual(made + 1);
      expect(sample(metrics, 'parley_projector_batch_events_sum')).toBeGreaterThanOrEqual(made + 1);

      // A lag gauge for every projection /health reports, in events and seconds.
      const health = await (await fetch(`${base}/health`)).json();
      const projections = Object.keys(health.projections).sort();
      expect(projections.length).toBeGreaterThan(0);
      const lagged = samples(metrics, 'parley_projection_lag_events');
      expect(lagged.map((s) => s.labels.projection).sort()).toEqual(projections);
      for (const s of lagged) expect(s.value).toBeGreaterThanOrEqual(0);
      expect(samples(metrics, 'parley_projection_lag_seconds').map((s) => s.labels.projection).sort()).toEqual(projections);

      expect(sample(metrics, 'parley_open_sockets', { transport: 'ws' })).toBe(1);
      expect(sample(metrics, 'parley_open_subscriptions', { transport: 'ws' })).toBe(1);
      expect(sample(metrics, 'parley_open_sockets', { transport: 'http_subscribe' })).toBe(1);
      expect(sample(metrics, 'parley_fanout_delivery_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(sample(metrics, 'parley_process_cpu_seconds_total')).toBeGreaterThan(0);
      // The Grafana dashboard in the repository reads only metrics the server exposes.
      const dashboard = readFileSync(join(__dirname, '..', '..', 'deploy', 'grafana', 'parley-dashboard.json'), 'utf8');
      const used = new Set([...dashboard.matchAll(/parley_\w+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')));
      expect(used.size).toBeGreaterThan(10);
      for (const name of used) expect(metrics).toContain(`# TYPE ${name} `);
    } finally {
      await ws.close();
      await http.close();
    }
    // Closed sockets stop counting.
    for (let i = 0; i < 100; i++) {
      const metrics = await (await scrape(`Bearer ${METRICS_TOKEN}`)).text();
      if (sample(metrics, 'parley_open_sockets', { transport: 'ws' }) === 0 && sample(metrics, 'parley_open_sockets', { transport: 'http_subscribe' }) === 0) {
        // A stream's access line comes when it ends.
        const stream = await accessLine(http.headers.get('x-request-id')!);
        expect(stream).toMatchObject({ method: 'SUBSCRIBE', route: '/*', status: 200, instance });
        return;
      }
      await sleep(20);
    }
    throw new Error('the closed sockets still count as open');
  });
});
