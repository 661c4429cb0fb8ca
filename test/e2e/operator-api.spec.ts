import jwt from 'jsonwebtoken';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenApiDocument, operationsOf } from '../../src/modules/api-docs/openapi-document';
import { DeclaredRoutes } from '../../src/modules/roles/declared-routes';
import { InstanceExporter } from '../../src/shared/application/operations/instance-transfer/export-instance';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { BLOB_STORE, BlobStore } from '../../src/shared/ports/blob-store.port';
import { eventually } from '../support/waiting';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startTestServer, TestServer } from '../support/test-server';

const SECRET = 'the-deployment-admin-secret-of-this-test-0123456789';
const OPERATOR = '/services/parley_operator/v1';

/** A deployment token as the console mints it: HS256 with CONSOLE_ADMIN_SECRET. */
const operatorToken = ({ sub = 'Ops Alice', lifetime = 900, secret = SECRET, iat = Math.floor(Date.now() / 1000), ...extra }: Record<string, any> = {}) =>
  jwt.sign({ iss: 'parley_console', sub, iat, exp: iat + lifetime, ...extra }, secret, { algorithm: 'HS256' });

/** An instance key's token for `instanceId`. */
const instanceToken = (instanceId: string, keyId: string, secret: string, claims: Record<string, unknown> = {}) =>
  jwt.sign({ instance: instanceId, iss: `api_keys/${keyId}`, ...claims }, secret, { algorithm: 'HS256', expiresIn: 600 });

/** `:param` (Fastify) → `{param}` (OpenAPI). */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('the deployment API (services/parley_operator/v1) with CONSOLE_ENABLED=true', () => {
  let s: TestServer;
  let receiver: WebhookReceiver;
  /** What POST /instances answered for `acme`, its key's secret included. */
  let created: { key: { id: string; secret: string } };
  const op = (method: string, path: string, body?: unknown, token: string | null = operatorToken()) => s.request(method, OPERATOR + path, { body, token });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    s = await startTestServer({
      env: {
        CONSOLE_ENABLED: 'true',
        CONSOLE_ADMIN_SECRET: SECRET,
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_RETRY_SCHEDULE_MS: '50',
        WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    await s.close();
    await receiver.close();
  });

  it('creates an instance with a first key whose secret works at once, recorded as the console user', async () => {
    const res = await op('POST', '/instances', { id: 'acme' });
    expect(res.status).toBe(201);
    created = res.body;
    expect(res.body).toEqual({
      id: 'acme',
      locator: 'v1:local:acme',
      enabled: true,
      token_provider_enabled: false,
      created_at: expect.any(String),
      keys: [{ id: expect.any(String), enabled: true, created_at: expect.any(String) }],
      key: { id: res.body.keys[0].id, secret: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/) },
    });
    const su = instanceToken('acme', res.body.key.id, res.body.key.secret, { su: true });
    const user = await s.request('POST', '/services/chatkit/v6/acme/users', { body: { id: 'u1', name: 'U1' }, token: su });
    expect(user.status).toBe(201);
    const byConsole = await s.request('GET', '/services/parley_audit/v1/acme/actors/key:console', { token: su });
    expect(byConsole.body.events.map((e: any) => [e.type, e.actor])).toEqual([
      ['InstanceCreated', { key_id: 'console', console_user: 'Ops Alice' }],
      ['KeyCreated', { key_id: 'console', console_user: 'Ops Alice' }],
    ]);
    // The secret is in the answer once, never in the log.
    expect(JSON.stringify(byConsole.body)).not.toContain(res.body.key.secret);

    expect((await op('POST', '/instances', { id: 'acme' })).body.error).toBe('services/parley_operator/conflict/instance_exists');
    for (const id of ['has.dot', '', 'x'.repeat(65)]) expect((await op('POST', '/instances', { id })).status).toBe(422);
  });

  it('pages instances in id order (limit ≤ 100, next), never the whole list', async () => {
    for (const id of ['page-c', 'page-a', 'page-b', 'page-d']) expect((await op('POST', '/instances', { id })).status).toBe(201);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await op('GET', `/instances?limit=2${after ? `&after=${after}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.instances.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.instances.map((i: { id: string }) => i.id));
      pages++;
      if (!res.body.next) break;
      after = res.body.next;
    }
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(['acme', 'page-a', 'page-b', 'page-c', 'page-d', s.instanceId]));
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBe(Math.ceil(seen.length / 2));
    const whole = await op('GET', '/instances');
    expect(whole.body.instances.map((i: { id: string }) => i.id)).toEqual(seen); // default 50
    expect(whole.body.instances.find((i: { id: string }) => i.id === s.instanceId)).toEqual({
      id: s.instanceId,
      locator: s.locator,
      enabled: true,
      token_provider_enabled: true,
      created_at: expect.any(String),
      keys: [{ id: s.keyId, enabled: true, created_at: expect.any(String) }],
    });
    for (const bad of ['limit=0', 'limit=101', 'limit=x', 'after=a.b']) expect((await op('GET', `/instances?${bad}`)).status).toBe(422);
  });

  it('switches an instance and its test token provider (PUT), which its API obeys at once', async () => {
    expect((await op('POST', '/instances', { id: 'switchy' })).status).toBe(201);
    const provider = () => s.request('POST', '/services/chatkit_token_provider/v1/switchy/token', { body: { grant_type: 'client_credentials', user_id: 'u' }, token: null });
    expect((await provider()).status).toBe(404);
    const on = await op('PUT', '/instances/switchy', { token_provider_enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id: 'switchy', enabled: true, token_provider_enabled: true });
    expect((await provider()).status).toBe(200);
    const off = await op('PUT', '/instances/switchy', { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, token_provider_enabled: true });
    expect((await provider()).status).toBe(404);
    expect((await op('PUT', '/instances/switchy', { enabled: true })).body.enabled).toBe(true);
    expect((await provider()).status).toBe(200);
    expect((await op('PUT', '/instances/never-made', { enabled: false })).body.error).toBe('services/parley_operator/not_found/instance_not_found');
    expect((await op('PUT', '/instances/switchy', { enabled: 'yes' })).status).toBe(422);
  });

  it('creates and disables keys: a disabled key signs nothing valid from then on', async () => {
    const made = await op('POST', `/instances/${s.instanceId}/keys`);
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.any(String), secret: expect.any(String) });
    const su = instanceToken(s.instanceId, made.body.id, made.body.secret, { su: true });
    expect((await s.request('GET', s.chat('/users'), { token: su })).status).toBe(200);
    const disabled = await op('PUT', `/instances/${s.instanceId}/keys/${made.body.id}`, { enabled: false });
    expect([disabled.status, disabled.body]).toEqual([200, { id: made.body.id, enabled: false }]);
    expect((await s.request('GET', s.chat('/users'), { token: su })).status).toBe(401);
    const listed = await op('GET', '/instances');
    expect(listed.body.instances.find((i: { id: string }) => i.id === s.instanceId).keys).toEqual([
      { id: s.keyId, enabled: true, created_at: expect.any(String) },
      { id: made.body.id, enabled: false, created_at: expect.any(String) },
    ]);
    expect((await op('PUT', `/instances/${s.instanceId}/keys/${made.body.id}`, { enabled: true })).body.error).toBe(
      'services/parley_operator/unprocessable_entity/key_stays_disabled',
    );
    expect((await op('PUT', `/instances/${s.instanceId}/keys/no-such-key`, { enabled: false })).status).toBe(404);
    expect((await op('POST', '/instances/never-made/keys')).status).toBe(404);
  });

  it('health: what /health knows in detail, the log position, and the webhooks whose deliveries stopped', async () => {
    receiver.answer = () => 500;
    const hook = await s.request('POST', `/services/parley_webhooks/v1/${s.instanceId}/webhooks`, {
      body: { url: receiver.url(), secret: 'hook-secret', event_types: ['v1.users_created'] },
    });
    expect(hook.status).toBe(201);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'hooked', name: 'H' } })).status).toBe(201);
    const health = await eventually(async () => {
      const res = await op('GET', '/health');
      return res.body.webhooks_failing?.length > 0 && res;
    }, { what: 'the failing webhook in the operator health' });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      log_position: expect.stringMatching(/^\d+$/),
      live_log: { state: 'following' },
      storage: { state: 'ok' },
      webhooks_failing: [
        { instance_id: s.instanceId, webhook_id: hook.body.id, url: receiver.url(), failing_since: expect.any(String), event_type: 'v1.users_created', response_code: 500 },
      ],
      webhooks_failing_more: false,
    });
    const instances = health.body.projections.find((p: { name: string }) => p.name === 'instances_v1');
    expect(instances).toMatchObject({ name: 'instances_v1', state: 'running', lag: expect.any(Number), lag_unit: 'events', lag_seconds: expect.any(Number) });
    expect(health.body.projections.length).toBe(Object.keys((await s.request('GET', '/health', { token: null })).body.projections).length);
  });

  it('export: the NDJSON npm run export writes, streamed as a download, the export itself recorded first with the console user', async () => {
    const res = await fetch(`${s.baseUrl}${OPERATOR}/instances/acme/export`, { headers: { authorization: `Bearer ${operatorToken({ sub: 'Ops Exporter' })}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="parley-export-acme-[^"]+\.ndjson"$/);
    const body = await res.text();
    const dir = mkdtempSync(join(tmpdir(), 'parley-operator-export-'));
    try {
      const app = s.server.app;
      const exporter = new InstanceExporter(app.get<EventStore>(EVENT_STORE), app.get<BlobStore>(BLOB_STORE), 'acme', join(dir, 'out'), 'test', () => undefined);
      exporter.open();
      await exporter.exportToHead();
      exporter.close(true);
      expect(body).toBe(readFileSync(join(dir, 'out', 'events.ndjson'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const events = body.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['InstanceCreated', 'KeyCreated', 'UserCreated']));
    // The read of the content is in the log (and so in the export) before any of it was sent.
    expect(events[events.length - 1]).toMatchObject({ stream: 'instance-acme', type: 'InstanceExported', metadata: { actor: { key_id: 'console', console_user: 'Ops Exporter' } } });
    const anotherToken = instanceToken('acme', events.find((e) => e.type === 'KeyCreated').data.key_id, created.key.secret, { su: true });
    const byConsole = await s.request('GET', '/services/parley_audit/v1/acme/actors/key:console', { token: anotherToken });
    expect(byConsole.body.events.filter((e: any) => e.type === 'InstanceExported').map((e: any) => e.actor)).toEqual([{ key_id: 'console', console_user: 'Ops Exporter' }]);
    expect((await op('GET', '/instances/never-made/export')).status).toBe(404);
  });

  it('refuses every route to anyone without a valid deployment token (clear 4xx), changing nothing', async () => {
    const other = (await op('POST', '/instances', { id: 'other-tenant' })).body.key;
    const routes = s.server.app.get(DeclaredRoutes).routes.filter((r) => r.access?.kind === 'operator' && r.method !== 'HEAD');
    expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(
      [
        'GET /services/parley_operator/v1/instances',
        'POST /services/parley_operator/v1/instances',
        'PUT /services/parley_operator/v1/instances/:instanceId',
        'POST /services/parley_operator/v1/instances/:instanceId/keys',
        'PUT /services/parley_operator/v1/instances/:instanceId/keys/:keyId',
        'GET /services/parley_operator/v1/health',
        'GET /services/parley_operator/v1/instances/:instanceId/export',
        'POST /services/parley_operator/v1/instances/:instanceId/export/links',
        'POST /services/parley_operator/v1/instances/:instanceId/import',
        'GET /services/parley_operator/v1/instances/:instanceId/imports/:importId',
      ].sort(),
    );
    const now = Math.floor(Date.now() / 1000);
    const attempts: [string, string | null, number, string][] = [
      ['no token', null, 401, 'missing_token'],
      ["a stranger's token (another secret)", operatorToken({ secret: 'a-stranger-secret-that-is-long-enough-000' }), 401, 'invalid_token'],
      ['a plain user token of the instance', s.token({ sub: 'hooked' }), 401, 'operator_token_required'],
      ['an su token of the instance', s.token({ su: true }), 401, 'operator_token_required'],
      ['an su token of another instance', instanceToken('other-tenant', other.id, other.secret, { su: true }), 401, 'operator_token_required'],
      ['an su token of another instance claiming the operator issuer', jwt.sign({ iss: 'parley_console', sub: 'x', iat: now, exp: now + 60 }, other.secret), 401, 'invalid_token'],
      ['an expired operator token', operatorToken({ iat: now - 1000, lifetime: 900 }), 401, 'token_expired'],
      ['an operator token living over an hour', operatorToken({ lifetime: 3601 }), 401, 'token_lifetime_too_long'],
      ['an operator token without iat', jwt.sign({ iss: 'parley_console', sub: 'x', exp: now + 60 }, SECRET, { noTimestamp: true }), 401, 'invalid_token'],
      ['an operator token without exp', jwt.sign({ iss: 'parley_console', sub: 'x', iat: now }, SECRET), 401, 'invalid_token'],
      ['an unsigned operator token (alg none)', jwt.sign({ iss: 'parley_console', sub: 'x', iat: now, exp: now + 60 }, '', { algorithm: 'none' }), 401, 'invalid_token'],
      ['an operator token of another algorithm (HS512)', jwt.sign({ iss: 'parley_console', sub: 'x', iat: now, exp: now + 60 }, SECRET, { algorithm: 'HS512' }), 401, 'invalid_token'],
      ['an operator token naming no usable console user', operatorToken({ sub: 'a:b' }), 401, 'invalid_token'],
      ['a malformed credential', 'not-a-jwt', 401, 'invalid_token'],
    ];
    const before = await op('GET', '/instances?limit=100');
    for (const route of routes) {
      const path = route.url.replace(':instanceId', 'acme').replace(':keyId', before.body.instances.find((i: any) => i.id === 'acme').keys[0].id);
      const body = route.method === 'GET' ? undefined : { id: 'intruder', enabled: false, token_provider_enabled: true };
      for (const [who, token, status, reason] of attempts) {
        const res = await s.request(route.method, path, { body, token });
        expect([route.method, route.url, who, res.status, res.body?.error]).toEqual([route.method, route.url, who, status, `services/parley_operator/unauthorized/${reason}`]);
        expect(res.body.error_description).toEqual(expect.any(String));
      }
    }
    expect((await op('GET', '/instances?limit=100')).body).toEqual(before.body);
  });

  it('documents every route in the OpenAPI document, secured by the deployment token', async () => {
    const document = s.server.app.get(OpenApiDocument).get();
    const served = s.server.app
      .get(DeclaredRoutes)
      .routes.filter((r) => r.access?.kind === 'operator' && r.method !== 'HEAD')
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`);
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith(OPERATOR))
      .flatMap(([path, item]) => operationsOf(item).map(([method, operation]) => ({ route: `${method} ${path}`, operation })))
      .filter(({ route, operation }) => {
        // The archive download takes a signed link instead of a deployment token (operator-transfer.spec.ts).
        if (route !== `get ${OPERATOR}/instances/{instanceId}/export/archive`) return true;
        expect(operation.security).toEqual([]);
        return false;
      });
    expect(documented.map((d) => d.route).sort()).toEqual(served.sort());
    for (const { route, operation } of documented) {
      expect([route, operation.tags, operation.security]).toEqual([route, ['Operator'], [{ operatorToken: [] }]]);
      expect([route, Object.keys(operation.responses).some((status) => /^2/.test(status))]).toEqual([route, true]);
      expect((operation.parameters ?? []).some((p: any) => p.name === 'Idempotency-Key')).toBe(false);
    }
    expect(document.components?.securitySchemes?.operatorToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('the deployment API is off by default, and without CONSOLE_ADMIN_SECRET no one signs in', () => {
  it('CONSOLE_ENABLED unset: its routes answer 404 as unknown routes do, and are not documented', async () => {
    const s = await startTestServer({ env: { CONSOLE_ADMIN_SECRET: SECRET } });
    try {
      const unknown = await s.request('GET', '/services/parley_nothing/v1/instances', { token: operatorToken() });
      for (const [method, path] of [['GET', '/instances'], ['POST', '/instances'], ['GET', '/health'], ['GET', `/instances/${s.instanceId}/export`], ['POST', `/instances/${s.instanceId}/import`], ['POST', `/instances/${s.instanceId}/export/links`]]) {
        const res = await s.request(method, OPERATOR + path, { token: operatorToken(), body: method === 'POST' ? { id: 'x' } : undefined });
        expect([method, path, res.status]).toEqual([method, path, 404]);
        expect(res.body.error).toBe(unknown.body.error.replace('parley_nothing', 'parley_operator'));
      }
      const document = s.server.app.get(OpenApiDocument).get();
      expect(Object.keys(document.paths).filter((p) => p.startsWith(OPERATOR))).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('CONSOLE_ENABLED=true without CONSOLE_ADMIN_SECRET: every route answers 403 operator_sign_in_disabled', async () => {
    const s = await startTestServer({ env: { CONSOLE_ENABLED: 'true' } });
    try {
      for (const token of [operatorToken(), null, s.token({ su: true })]) {
        const res = await s.request('GET', `${OPERATOR}/instances`, { token });
        expect([res.status, res.body.error]).toEqual([403, 'services/parley_operator/forbidden/operator_sign_in_disabled']);
        expect(res.body.error_description).toMatch(/CONSOLE_ADMIN_SECRET/);
      }
    } finally {
      await s.close();
    }
  });
});
