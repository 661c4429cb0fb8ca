/**
 * Tokens (issue 17, item 4): a maximum lifetime, no token of a deleted user (nor of the user
 * before a re-created one), no key secret too short to be secret, and a warning at start
 * when the test token provider is on. Tried with plain tokens on real servers.
 */
import { CommandBus } from '@nestjs/cqrs';
import jwt from 'jsonwebtoken';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config';
import { CreateKeyCommand } from '../../src/modules/instances/create-key/create-key.handler';
import { InstanceChanges } from '../../src/modules/instances/instance-changes';
import { SECRET_BOX, SecretBox } from '../../src/shared/crypto/secret-box';
import { startProcess } from '../support/server-process';
import { HttpFrame, openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

const DAY = 86_400;
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('token lifetime', () => {
  let s: TestServer;
  /** A token as chatkit-server mints it, with the `iat` and `exp` given (seconds). */
  const signed = (claims: { sub?: string; iat?: number; exp: number }, secret = s.secret) =>
    jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, ...claims }, secret, { algorithm: 'HS256', noTimestamp: claims.iat === undefined });
  const rooms = (token: string) => s.request('GET', s.chat('/rooms'), { token });

  beforeAll(async () => {
    s = await startTestServer();
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('refuses a token expiring in 2100, on HTTP and on subscriptions', async () => {
    const forever = signed({ sub: 'ann', iat: nowSeconds(), exp: Date.UTC(2100, 0, 1) / 1000 });
    const refused = await rooms(forever);
    expect([refused.status, refused.body.error]).toEqual([401, 'services/chatkit/unauthorized/token_lifetime_too_long']);
    expect(refused.body.error_description).toContain('TOKEN_MAX_LIFETIME_SECONDS');
    const stream = await openHttpSubscription(s.baseUrl + s.chat('/users'), { authorization: `Bearer ${forever}` });
    expect([stream.status, stream.body.error]).toEqual([401, 'services/chatkit/unauthorized/token_lifetime_too_long']);
    // Without an `iat`, the lifetime counts from now.
    expect((await rooms(signed({ sub: 'ann', exp: Date.UTC(2100, 0, 1) / 1000 }))).status).toBe(401);
    // An old `iat` counts: the token was made to live longer than the maximum.
    expect((await rooms(signed({ sub: 'ann', iat: nowSeconds() - 40 * DAY, exp: nowSeconds() + DAY }))).status).toBe(401);
  });

  it('accepts the tokens the SDKs and the token providers issue, up to the 30-day default', async () => {
    expect((await rooms(s.token({ sub: 'ann', expiresIn: DAY }))).status).toBe(200);
    const provided = await s.request('POST', `/services/chatkit_token_provider/v1/${s.instanceId}/token?user_id=ann`, {
      rawBody: 'grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      token: null,
    });
    expect(provided.status).toBe(200);
    expect((await rooms(provided.body.access_token)).status).toBe(200);
    expect((await rooms(signed({ sub: 'ann', iat: nowSeconds(), exp: nowSeconds() + 30 * DAY }))).status).toBe(200);
    expect((await rooms(signed({ sub: 'ann', iat: nowSeconds(), exp: nowSeconds() + 31 * DAY }))).status).toBe(401);
  });

  it('holds for Feeds tokens too, which are issued ten minutes in the past', async () => {
    const feeds = (exp: number) =>
      jwt.sign(
        { app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: nowSeconds() - 600, exp, feeds: { permission: { path: '*', action: '*' } } },
        s.secret,
        { algorithm: 'HS256', noTimestamp: true },
      );
    const read = (token: string) => s.request('GET', `/services/feeds/v1/${s.instanceId}/feeds/private-notes/items`, { token });
    expect((await read(feeds(nowSeconds() + DAY - 600))).status).toBe(200);
    const refused = await read(feeds(Date.UTC(2100, 0, 1) / 1000));
    expect(refused.status).toBe(403);
    expect(refused.body.error_description).toContain('TOKEN_MAX_LIFETIME_SECONDS');
  });

  it('follows TOKEN_MAX_LIFETIME_SECONDS', async () => {
    const short = await startTestServer({ env: { TOKEN_MAX_LIFETIME_SECONDS: '3600' } });
    try {
      const get = (expiresIn: number) => short.request('GET', short.chat('/rooms'), { token: short.token({ sub: 'x', expiresIn }) });
      expect((await get(3600)).status).toBe(200);
      expect((await get(7200)).status).toBe(401);
    } finally {
      await short.close();
    }
    expect(() => loadConfig({ TOKEN_MAX_LIFETIME_SECONDS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOKEN_MAX_LIFETIME_SECONDS: 'forever' })).toThrow(/TOKEN_MAX_LIFETIME_SECONDS must be a whole number of seconds/);
  });
});

describe('tokens of deleted users', () => {
  let s: TestServer;
  /** A user token issued a minute ago, before whatever the test does next. */
  const issuedEarlier = (sub: string) =>
    jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, sub, iat: nowSeconds() - 60 }, s.secret, { algorithm: 'HS256', expiresIn: 3600 });
  const rooms = (token: string) => s.request('GET', s.chat('/rooms'), { token });

  beforeAll(async () => {
    s = await startTestServer();
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: [{ id: 'dora', name: 'Dora' }, { id: 'eve', name: 'Eve' }] } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['dora', 'eve'] } })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('refuse a deleted user’s token at once, and still once the id is created again; new tokens act for the new user', async () => {
    const old = issuedEarlier('dora');
    expect((await rooms(old)).status).toBe(200);
    expect((await s.request('DELETE', s.chat('/users/dora'))).status).toBe(204);
    const refused = await rooms(old);
    expect([refused.status, refused.body.error]).toEqual([401, 'services/chatkit/unauthorized/token_revoked']);
    const stream = await openHttpSubscription(s.baseUrl + s.chat('/rooms/lobby'), { authorization: `Bearer ${old}` });
    expect(stream.status).toBe(401);

    expect((await s.request('POST', s.chat('/users'), { body: { id: 'dora', name: 'Another Dora' } })).status).toBe(201);
    expect((await rooms(old)).status).toBe(401);
    const sent = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: { text: 'as the new dora?' }, token: old });
    expect(sent.status).toBe(401);
    expect((await rooms(s.token({ sub: 'dora' }))).status).toBe(200);
  });

  it('end an open subscription of the user when the user is deleted', async () => {
    const token = issuedEarlier('eve');
    const stream = await openHttpSubscription(s.baseUrl + s.chat('/rooms/lobby'), { authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    expect((await s.request('DELETE', s.chat('/users/eve'))).status).toBe(204);
    let frame: HttpFrame;
    do frame = await stream.next(); while (frame[0] !== 255);
    await stream.close();
    expect([frame[1], frame[3].error]).toEqual([401, 'services/chatkit/unauthorized/token_revoked']);
  });

  it('leave su tokens alone (the app server’s own), even naming a deleted user', async () => {
    const su = jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, sub: 'eve', su: true, iat: nowSeconds() - 60 }, s.secret, {
      algorithm: 'HS256',
      expiresIn: 3600,
    });
    expect((await rooms(su)).status).toBe(200);
  });
});

describe('instance key secrets', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-keys-'));
    dirs.push(dir);
    return dir;
  };

  it('refuses a short INSTANCE_KEY secret at start, naming the variable', async () => {
    expect(() => loadConfig({ INSTANCE_LOCATOR: 'v1:local:weak', INSTANCE_KEY: 'k:secret' })).toThrow(
      /^INSTANCE_KEY: a key secret needs at least 10 bytes, this one has 6/,
    );
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, DATA_DIR: dataDir(), PORT: '0', HOST: '127.0.0.1', INSTANCE_LOCATOR: 'v1:local:weak', INSTANCE_KEY: 'k:my-secret' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('INSTANCE_KEY: a key secret needs at least 10 bytes, this one has 9');
  });

  it('refuses a short secret through the command bus (what the CLI and the bootstrap use), creating nothing', async () => {
    const s = await startTestServer();
    try {
      const commands = s.server.app.get(CommandBus);
      await expect(commands.execute(new CreateKeyCommand(s.instanceId, 'weak', 'short', { key_id: 'test' }))).rejects.toMatchObject({
        status: 400,
        code: 'bad_request/weak_key_secret',
      });
      const created = await commands.execute(new CreateKeyCommand(s.instanceId, 'strong', undefined, { key_id: 'test' }));
      expect(created.secret.length).toBeGreaterThanOrEqual(40);
      const weak = jwt.sign({ instance: s.instanceId, iss: 'api_keys/weak', su: true }, 'short', { algorithm: 'HS256', expiresIn: 60 });
      expect((await s.request('GET', s.chat('/rooms'), { token: weak })).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it('keeps honouring a short key stored before the rule, and warns at every start; warns of the test token provider', async () => {
    const dir = dataDir();
    const s = await startTestServer({ dataDir: dir });
    const instanceId = s.instanceId;
    try {
      // A key created before short secrets were refused: the log holds it as any other.
      const box = s.server.app.get<SecretBox>(SECRET_BOX);
      await s.server.app.get(InstanceChanges).apply({ type: 'CreateKey', id: instanceId, keyId: 'legacy', secret: box.seal('old') }, { key_id: 'test' });
    } finally {
      await s.close();
    }
    const server = await startProcess('dist/src/main.js', { DATA_DIR: dir, LOG_LEVEL: 'info' });
    try {
      const warnings = server.output.filter((line) => line.includes('"level":40')).map((line) => JSON.parse(line).msg as string);
      expect(warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^The test token provider is enabled for the instance "${instanceId}"`)),
          expect.stringMatching(new RegExp(`^The key "legacy" of the instance "${instanceId}" is still honoured, but its secret needs at least 10 bytes, this one has 3`)),
        ]),
      );
      expect(server.output.join('\n')).not.toContain('"old"');
      const token = jwt.sign({ instance: instanceId, iss: 'api_keys/legacy', su: true }, 'old', { algorithm: 'HS256', expiresIn: 60 });
      const answer = await fetch(`http://127.0.0.1:${server.port}/services/chatkit/v6/${instanceId}/rooms`, { headers: { authorization: `Bearer ${token}` } });
      expect(answer.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
