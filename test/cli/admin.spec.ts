import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../src/cli/admin';
import { ALL_PROJECTIONS } from '../../projections';
import jwt from 'jsonwebtoken';
import { answerOf } from '../support/json-call';
import { ServerProcess, startProcess } from '../support/server-process';
import { captureIo, eventually, KEY_ID, KEY_SECRET, newDataDir, Parley, startParley } from './cli-support';

const admin = async (dataDir: string, ...argv: string[]) => {
  const io = captureIo();
  const code = await run(argv, { DATA_DIR: dataDir }, io);
  return { code, out: io.text(), err: io.errText(), lines: io.stdout };
};

describe('admin CLI on the embedded stores, no server running', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = newDataDir();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates, lists, disables and enables instances', async () => {
    expect(await admin(dataDir, 'instance:list')).toMatchObject({ code: 0, out: 'No instances.\n' });
    const created = await admin(dataDir, 'instance:create', 'acme', '--cluster', 'eu1');
    expect(created).toMatchObject({ code: 0, out: 'Created instance "acme" (locator v1:eu1:acme)\n' });
    expect((await admin(dataDir, 'instance:create', 'acme')).out).toContain('already exists');
    expect((await admin(dataDir, 'instance:create', 'beta')).code).toBe(0);

    let list = await admin(dataDir, 'instance:list');
    expect(list.lines).toEqual([
      'ID    CLUSTER  DISABLED  TOKEN PROVIDER  KEYS',
      'acme  eu1      no        disabled        -',
      'beta  local    no        disabled        -',
    ]);

    expect((await admin(dataDir, 'instance:disable', 'acme')).code).toBe(0);
    expect((await admin(dataDir, 'token-provider:enable', 'beta')).code).toBe(0);
    list = await admin(dataDir, 'instance:list');
    expect(list.lines[1]).toMatch(/^acme\s+eu1\s+yes\s+disabled\s+-$/);
    expect(list.lines[2]).toMatch(/^beta\s+local\s+no\s+enabled\s+-$/);
    expect((await admin(dataDir, 'instance:enable', 'acme')).code).toBe(0);
    expect((await admin(dataDir, 'token-provider:disable', 'beta')).code).toBe(0);
    list = await admin(dataDir, 'instance:list');
    expect(list.lines[1]).toMatch(/^acme\s+eu1\s+no\s+disabled\s+-$/);
    expect(list.lines[2]).toMatch(/^beta\s+local\s+no\s+disabled\s+-$/);
  });

  it('creates keys, shows each secret once and lists keys with their states only', async () => {
    const generated = await admin(dataDir, 'key:create', 'acme');
    expect(generated.code).toBe(0);
    expect(generated.lines).toHaveLength(1);
    const line = generated.out.trim();
    const keyId = line.slice(0, line.indexOf(':'));
    const secret = line.slice(line.indexOf(':') + 1);
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(generated.err).toContain('not shown again');

    const chosen = await admin(dataDir, 'key:create', 'acme', 'ops', '--secret', 'chosen-secret-123');
    expect(chosen.out).toBe('ops:chosen-secret-123\n');
    expect((await admin(dataDir, 'key:disable', 'acme', 'ops')).code).toBe(0);

    const keys = await admin(dataDir, 'key:list', 'acme');
    expect(keys.code).toBe(0);
    expect(keys.lines[0]).toMatch(/^KEY ID\s+STATE\s+CREATED AT$/);
    expect(keys.lines[1]).toMatch(new RegExp(`^${keyId}\\s+active\\s+\\d{4}-`));
    expect(keys.lines[2]).toMatch(/^ops\s+disabled\s+\d{4}-/);
    const list = await admin(dataDir, 'instance:list');
    expect(list.lines[1]).toContain(`${keyId} (active), ops (disabled)`);
    for (const out of [keys.out, list.out]) {
      expect(out).not.toContain(secret);
      expect(out).not.toContain('chosen-secret-123');
    }
    expect((await admin(dataDir, 'key:list', 'beta')).out).toBe('The instance "beta" has no keys.\n');
  });

  it('refuses a chosen secret too short to be secret, and creates no key', async () => {
    const refused = await admin(dataDir, 'key:create', 'acme', 'weak', '--secret', 'secret');
    expect(refused).toMatchObject({ code: 1, out: '' });
    expect(refused.err).toMatch(/^error: The key "weak" was not created: a key secret needs at least 10 bytes, this one has 6/);
    expect((await admin(dataDir, 'key:list', 'acme')).out).not.toMatch(/^weak\b/m);
  });

  it('keeps every secret out of the stores: the log holds them sealed', () => {
    const files = readdirSync(dataDir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'master.key')
      .map((e) => e.name);
    expect(files).toContain('events.sqlite');
    const bytes = files.map((f) => readFileSync(join(dataDir, f)).toString('latin1')).join('\n');
    expect(bytes).toContain('KeyCreated');
    expect(bytes).not.toContain('chosen-secret-123');
  });

  it('answers domain errors with their message and exit 1', async () => {
    const missingKey = await admin(dataDir, 'key:disable', 'acme', 'nope');
    expect(missingKey).toMatchObject({ code: 1, out: '' });
    expect(missingKey.err).toBe('error: The key "nope" does not exist\n');
    expect(await admin(dataDir, 'instance:disable', 'ghost')).toMatchObject({
      code: 1,
      err: 'error: The instance "ghost" does not exist\n',
    });
    expect((await admin(dataDir, 'key:list', 'ghost')).code).toBe(1);
    expect((await admin(dataDir, 'key:create', 'acme', 'ops')).err).toContain('already exists');
    expect((await admin(dataDir, 'instance:create', 'not valid')).code).toBe(1);
  });

  it('answers a wrong command line with the usage and exit 2, and help with exit 0', async () => {
    for (const argv of [[], ['frobnicate'], ['instance:create'], ['key:disable', 'acme'], ['instance:list', 'extra'], ['key:create', 'acme', '--bogus']]) {
      const res = await admin(dataDir, ...argv);
      expect(res.code).toBe(2);
      expect(res.err).toContain('Usage: npm run admin');
      expect(res.out).toBe('');
    }
    const help = await admin(dataDir, 'help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('key:create <instance> [key_id] [--secret <s>]');
    expect((await admin(dataDir, 'instance:create', '--help')).code).toBe(0);
  });
});

describe('admin CLI while a server runs on the same stores', () => {
  let dataDir: string;
  let parley: Parley;
  beforeAll(async () => {
    dataDir = newDataDir();
    parley = await startParley(dataDir, 'served');
  });
  afterAll(async () => {
    await parley.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const status = async (instanceId: string, key: { keyId: string; secret: string }) =>
    (await parley.request('GET', parley.chat('/users', 'v6', instanceId), { token: parley.token({ su: true }, key, instanceId) })).status;

  it('writes through the server-held projections: the server sees keys created and disabled within seconds', async () => {
    expect((await admin(dataDir, 'instance:create', 'tenant')).code).toBe(0);
    const created = await admin(dataDir, 'key:create', 'tenant', 'tenant-key');
    expect(created.code).toBe(0);
    const secret = created.out.trim().slice('tenant-key:'.length);
    const key = { keyId: 'tenant-key', secret };

    // The server kept its leases: the CLI's writes waited on the server's checkpoints.
    expect(parley.runner.running).toHaveLength(ALL_PROJECTIONS.length);

    const visible = await eventually(async () => (await status('tenant', key)) === 200);
    expect(visible).toBeLessThan(3000);
    const listed = await admin(dataDir, 'instance:list');
    expect(listed.out).toMatch(/tenant\s+local\s+no\s+disabled\s+tenant-key \(active\)/);

    expect((await admin(dataDir, 'key:disable', 'tenant', 'tenant-key')).code).toBe(0);
    const refused = await eventually(async () => (await status('tenant', key)) === 401);
    expect(refused).toBeLessThan(3000);
  });

  it('switches the test token provider and the instance itself for the running server', async () => {
    const provider = () =>
      parley.request('POST', `/services/chatkit_token_provider/v1/${parley.instanceId}/token?user_id=someone`, { token: null });
    expect((await provider()).status).toBe(404);
    expect((await admin(dataDir, 'token-provider:enable', parley.instanceId)).code).toBe(0);
    await eventually(async () => (await provider()).status === 200);

    expect((await admin(dataDir, 'instance:disable', parley.instanceId)).code).toBe(0);
    await eventually(async () => (await parley.request('GET', parley.chat('/users'))).status === 404);
    expect((await admin(dataDir, 'instance:enable', parley.instanceId)).code).toBe(0);
    await eventually(async () => (await parley.request('GET', parley.chat('/users'))).status === 200);
  });
});

describe('admin CLI user:erase', () => {
  const INSTANCE = 'erasing';
  let dataDir: string;
  let server: ServerProcess;
  const su = jwt.sign({ instance: INSTANCE, iss: `api_keys/${KEY_ID}`, su: true }, KEY_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const request = async (method: string, path: string, body?: unknown, token = su) => {
    const response = await fetch(`http://127.0.0.1:${server.port}/services/chatkit/v6/${INSTANCE}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return answerOf(response);
  };
  beforeAll(async () => {
    dataDir = newDataDir();
    // The server is another process, as in production: it holds DATA_DIR's lock.
    server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: `${KEY_ID}:${KEY_SECRET}`, MASTER_KEY: '' });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has the running server erase the user, then erases one itself with no server, printing what was erased', async () => {
    expect((await request('POST', '/batch_users', { users: [{ id: 'ann', name: 'Ann' }, { id: 'ben', name: 'Ben' }] })).status).toBe(201);
    const ann = jwt.sign({ instance: INSTANCE, iss: `api_keys/${KEY_ID}`, sub: 'ann' }, KEY_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
    expect((await request('POST', '/rooms', { id: 'r1', name: 'r1', user_ids: ['ben'] }, ann)).status).toBe(201);
    for (const text of ['one', 'two']) expect((await request('POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: text }] }, ann)).status).toBe(201);

    // Beside the running server (DATA_DIR locked), the server runs it; the CLI prints the outcome.
    const besideServer = await admin(dataDir, 'user:erase', INSTANCE, 'ann');
    expect(besideServer.code).toBe(0);
    expect(besideServer.err).toContain('the running server erases it');
    expect(JSON.parse(besideServer.out)).toMatchObject({ status: 'completed', user_id: 'ann', erased: { user: 1, messages: 2 } });
    expect((await request('GET', '/users/ann')).status).toBe(404);
    expect((await request('GET', '/rooms/r1/messages')).body.map((m: { parts: { content: string }[] }) => m.parts[0].content)).toEqual(['DELETED', 'DELETED']);

    await server.stop('SIGTERM');
    const alone = await admin(dataDir, 'user:erase', INSTANCE, 'ben');
    expect(alone.code).toBe(0);
    expect(alone.err).not.toContain('running server');
    expect(JSON.parse(alone.out)).toMatchObject({ status: 'completed', user_id: 'ben', erased: { user: 1, messages: 0 } });
    // Asked again, it finds nothing left to erase; an id never created is refused.
    expect(JSON.parse((await admin(dataDir, 'user:erase', INSTANCE, 'ben')).out)).toMatchObject({ status: 'completed', erased: { user: 0, messages: 0 } });
    expect(await admin(dataDir, 'user:erase', INSTANCE, 'nobody')).toMatchObject({ code: 1, err: expect.stringContaining('does not exist') });
    expect((await admin(dataDir, 'user:erase', INSTANCE)).code).toBe(2);
  }, 120_000);
});
