import jwt from 'jsonwebtoken';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { runCli } from '../support/cli-process';
import { instanceCalls } from '../support/instance-calls';
import { ServerProcess, startProcess } from '../support/server-process';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhook management on a real server from dist/: `/services/parley_webhooks/v1/<instance>/webhooks`
 * answers su tokens of the instance only, checks what it is given (URL scheme, SSRF against
 * WEBHOOK_ALLOWED_HOSTS, secret, event types, sizes), never shows or logs the secret in plain
 * text, and the admin CLI manages the same webhooks.
 */
const INSTANCE = 'hooks-admin';
const KEY = 'hooks-key:hooks-secret-5a0e7c3d91';
const ALL_TYPES = [
  'v1.users_created',
  'v1.users_deleted',
  'v1.rooms_created',
  'v1.rooms_deleted',
  'v1.messages_created',
  'v1.messages_edited',
  'v1.messages_deleted',
  'v1.users_added_to_room',
  'v1.users_removed_from_room',
  'v1.user_left_room',
  'v1.message_sent_user_offline',
];

let dataDir: string;
let server: ServerProcess;
let receiver: WebhookReceiver;
const { call, as } = instanceCalls(INSTANCE, KEY, () => server.port);
const hooks = (path = '') => `/services/parley_webhooks/v1/${INSTANCE}/webhooks${path}`;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  dataDir = mkdtempSync(join(tmpdir(), 'parley-webhooks-admin-'));
  server = await startProcess('dist/src/main.js', {
    DATA_DIR: dataDir,
    INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
    INSTANCE_KEY: KEY,
    MASTER_KEY: '',
    // The receiver's port only: any other loopback port stays refused.
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`,
    CUSTOM_DATA_MAX_BYTES: '1000',
  });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhook management', () => {
  it('creates, lists, reads, updates and deletes webhooks, never showing the secret', async () => {
    const created = await call('POST', hooks(), { body: { url: receiver.url('/a'), secret: 'a-secret', custom_data: { team: 'search' } } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      url: receiver.url('/a'),
      event_types: ALL_TYPES,
      custom_data: { team: 'search' },
      standard_webhooks: false,
      active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.body.id;
    const other = (await call('POST', hooks(), { body: { url: receiver.url('/b'), secret: 'b-secret', event_types: ['v1.messages_created'] } })).body;
    expect(other.event_types).toEqual(['v1.messages_created']);

    expect((await call('GET', hooks())).body.map((w: { id: string }) => w.id)).toEqual([id, other.id]);
    expect((await call('GET', hooks(`/${id}`))).body).toEqual(created.body);

    const updated = await call('PUT', hooks(`/${id}`), { body: { event_types: ['v1.users_created', 'v1.rooms_created'], active: false } });
    expect(updated.body).toMatchObject({ id, url: receiver.url('/a'), event_types: ['v1.users_created', 'v1.rooms_created'], custom_data: { team: 'search' }, active: false, deactivated: { by: 'request' } });
    expect((await call('GET', hooks(`/${id}`))).body).toEqual(updated.body);
    const reactivated = await call('PUT', hooks(`/${id}`), { body: { active: true, secret: 'a-new-secret' } });
    expect(reactivated.body.active).toBe(true);
    expect(reactivated.body.deactivated).toBeUndefined();

    expect((await call('DELETE', hooks(`/${id}`))).status).toBe(204);
    expect((await call('GET', hooks(`/${id}`), { anyStatus: true })).body.error).toBe('services/parley_webhooks/not_found/webhook_not_found');
    expect((await call('PUT', hooks(`/${id}`), { body: { active: true }, anyStatus: true })).status).toBe(404);
    expect((await call('DELETE', hooks(`/${id}`), { anyStatus: true })).status).toBe(404);
    expect((await call('GET', hooks())).body.map((w: { id: string }) => w.id)).toEqual([other.id]);

    for (const answer of [created, updated, reactivated]) expect(answer.text).not.toMatch(/secret"|a-secret|a-new-secret/);
    await call('DELETE', hooks(`/${other.id}`));
  });

  it('answers su tokens of the instance only: a user token, another instance or no token gets nothing', async () => {
    const { id } = (await call('POST', hooks(), { body: { url: receiver.url(), secret: 's' } })).body;
    const attempts: [string, string, unknown?][] = [
      ['POST', hooks(), { url: receiver.url(), secret: 's' }],
      ['GET', hooks()],
      ['GET', hooks(`/${id}`)],
      ['PUT', hooks(`/${id}`), { url: receiver.url('/stolen') }],
      ['DELETE', hooks(`/${id}`)],
      ['POST', hooks(`/${id}/replay`), { from_position: '' }],
      ['GET', hooks(`/${id}/deliveries`)],
      ['GET', hooks(`/${id}/events`)],
      ['POST', hooks(`/${id}/deliveries/any/redeliver`)],
    ];
    const otherInstance = jwt.sign({ instance: 'another-instance', iss: `api_keys/${KEY.split(':')[0]}`, su: true }, KEY.split(':')[1], { algorithm: 'HS256', expiresIn: 3600 });
    for (const [method, path, body] of attempts) {
      expect((await call(method, path, { body, as: null, anyStatus: true })).status).toBe(401);
      expect((await call(method, path, { body, as: otherInstance, anyStatus: true })).status).toBe(401);
      const asUser = await call(method, path, { body, as: as('alice'), anyStatus: true });
      expect(asUser.status).toBe(403);
      expect(asUser.body.error).toBe('services/parley_webhooks/forbidden/su_required');
    }
    // Nothing changed.
    expect((await call('GET', hooks(`/${id}`))).body.url).toBe(receiver.url());
    expect((await call('GET', hooks())).body).toHaveLength(1);
    await call('DELETE', hooks(`/${id}`));
  });

  it.each([
    ['no secret', { url: 'https://hooks.example.com/x' }, 422, 'unprocessable_entity/validation_failed', /secret: required/],
    ['an empty secret', { url: 'https://hooks.example.com/x', secret: '' }, 422, 'unprocessable_entity/validation_failed', /secret: required/],
    ['no url', { secret: 's' }, 422, 'unprocessable_entity/validation_failed', /url: required/],
    ['a relative url', { url: '/hooks', secret: 's' }, 400, 'bad_request/invalid_webhook_url', /not an absolute URL/],
    ['an ftp url', { url: 'ftp://hooks.example.com/x', secret: 's' }, 400, 'bad_request/invalid_webhook_url', /ftp: is not http or https/],
    ['a url with a password', { url: 'https://u:p@hooks.example.com/x', secret: 's' }, 400, 'bad_request/invalid_webhook_url', /user name or password/],
    ['a url over 2048 characters', { url: `https://hooks.example.com/${'x'.repeat(2048)}`, secret: 's' }, 422, 'unprocessable_entity/validation_failed', /url/],
    ['a secret over 1024 characters', { url: 'https://hooks.example.com/x', secret: 's'.repeat(1025) }, 422, 'unprocessable_entity/validation_failed', /secret/],
    ['an unknown event type', { url: 'https://hooks.example.com/x', secret: 's', event_types: ['v1.messages_created', 'v1.nope'] }, 422, 'unprocessable_entity/validation_failed', /event_types: each one of v1.users_created/],
    ['no event type', { url: 'https://hooks.example.com/x', secret: 's', event_types: [] }, 422, 'unprocessable_entity/validation_failed', /event_types: at least one/],
    ['a repeated event type', { url: 'https://hooks.example.com/x', secret: 's', event_types: ['v1.users_created', 'v1.users_created'] }, 422, 'unprocessable_entity/validation_failed', /event_types/],
    ['custom_data over CUSTOM_DATA_MAX_BYTES', { url: 'https://hooks.example.com/x', secret: 's', custom_data: { big: 'x'.repeat(1000) } }, 413, '', /custom_data/],
    ['a loopback url', { url: 'http://127.0.0.1:9/x', secret: 's' }, 400, 'bad_request/webhook_url_not_allowed', /127\.0\.0\.1 is a loopback address.*WEBHOOK_ALLOWED_HOSTS/],
    ['an IPv6 loopback url', { url: 'http://[::1]/x', secret: 's' }, 400, 'bad_request/webhook_url_not_allowed', /loopback/],
    ['a private network url', { url: 'https://10.1.2.3/x', secret: 's' }, 400, 'bad_request/webhook_url_not_allowed', /private/],
    ['a link-local url (cloud metadata)', { url: 'http://169.254.169.254/latest/meta-data', secret: 's' }, 400, 'bad_request/webhook_url_not_allowed', /link-local/],
    ['a host resolving to loopback', { url: 'http://localhost:9/x', secret: 's' }, 400, 'bad_request/webhook_url_not_allowed', /localhost resolves to .*loopback/],
  ])('refuses %s with a clear 4xx and creates nothing', async (_what, body, status, error, description) => {
    const answer = await call('POST', hooks(), { body, anyStatus: true });
    expect(answer.status).toBe(status);
    if (error) expect(answer.body.error).toBe(`services/parley_webhooks/${error}`);
    expect(answer.text).toMatch(description);
    expect((await call('GET', hooks())).body).toEqual([]);
  });

  it('allows a non-public receiver that WEBHOOK_ALLOWED_HOSTS names, and refuses the same host on another port, also on update', async () => {
    const { id } = (await call('POST', hooks(), { body: { url: receiver.url(), secret: 's' } })).body;
    const moved = await call('PUT', hooks(`/${id}`), { body: { url: `http://127.0.0.1:${receiver.port === 65535 ? 1 : receiver.port + 1}/x` }, anyStatus: true });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toBe('services/parley_webhooks/bad_request/webhook_url_not_allowed');
    expect((await call('GET', hooks(`/${id}`))).body.url).toBe(receiver.url());
    await call('DELETE', hooks(`/${id}`));
  });

  it('caps the webhooks of an instance at 20', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await call('POST', hooks(), { body: { url: receiver.url(`/${i}`), secret: 's' } })).body.id);
    const refused = await call('POST', hooks(), { body: { url: receiver.url('/21'), secret: 's' }, anyStatus: true });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('services/parley_webhooks/conflict/too_many_webhooks');
    for (const id of ids) await call('DELETE', hooks(`/${id}`));
  }, 60_000);

  it('keeps the secret out of the data directory and the server output in plain text', async () => {
    const secret = `SECRET-${randomBytes(8).toString('hex')}`;
    const { id } = (await call('POST', hooks(), { body: { url: receiver.url(), secret } })).body;
    await call('PUT', hooks(`/${id}`), { body: { secret: `${secret}-2` } });
    expect(scanForMarkers({ folders: [dataDir], texts: { output: server.output.join('\n') } }, [secret])).toEqual([]);
    await call('DELETE', hooks(`/${id}`));
  });

  it('is managed from the admin CLI with the same checks', async () => {
    const env = { DATA_DIR: dataDir, WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}`, MASTER_KEY: '' };
    const created = await runCli('admin', ['webhook:create', INSTANCE, '--url', receiver.url('/cli'), '--secret', 'cli-secret', '--event-types', 'v1.messages_created,v1.users_created'], env);
    expect(created.code).toBe(0);
    const id = /^([0-9a-f-]{36})\s/m.exec(created.stdout)![1];
    expect((await call('GET', hooks(`/${id}`))).body).toMatchObject({ url: receiver.url('/cli'), event_types: ['v1.messages_created', 'v1.users_created'], active: true });
    expect((await runCli('admin', ['webhook:list', INSTANCE], env)).stdout).toContain(id);
    expect((await runCli('admin', ['webhook:update', INSTANCE, id, '--active', 'false'], env)).code).toBe(0);
    expect((await call('GET', hooks(`/${id}`))).body.active).toBe(false);
    const refused = await runCli('admin', ['webhook:create', INSTANCE, '--url', 'http://10.0.0.1/x', '--secret', 's'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/private address/);
    expect((await runCli('admin', ['webhook:delete', INSTANCE, id], env)).code).toBe(0);
    expect((await call('GET', hooks())).body).toEqual([]);
  }, 120_000);
});
