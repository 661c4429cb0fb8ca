import jwt from 'jsonwebtoken';
import { startTestServer, TestServer } from '../support/test-server';

/**
 * The console user (issue 21): the console mints instance tokens itself with a `console_user`
 * claim, and every event its requests append names that operator in its actor, as the audit API
 * shows. A claim that cannot name one is refused before anything is done.
 */
describe('console_user on instance tokens → Actor.console_user', () => {
  let s: TestServer;
  /** A token as the console mints it in the browser: su, 15 minutes, `console_user` (and `sub` to send as a user). */
  const consoleToken = (consoleUser: unknown, sub?: string) => {
    const iat = Math.floor(Date.now() / 1000);
    return jwt.sign(
      { instance: s.instanceId, iss: `api_keys/${s.keyId}`, su: true, console_user: consoleUser, iat, exp: iat + 900, ...(sub && { sub }) },
      s.secret,
      { algorithm: 'HS256' },
    );
  };
  const audit = (path: string) => s.request('GET', `/services/parley_audit/v1/${s.instanceId}${path}`);
  const created = (res: { status: number; text: string }) => {
    if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
  };

  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('records the console user on what an su token creates, and the audit API shows it', async () => {
    created(await s.request('POST', s.chat('/users'), { body: { id: 'carol', name: 'Carol' }, token: consoleToken('Ops Alice') }));
    const res = await audit('/users/carol');
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { type: string; actor: unknown }) => [e.type, e.actor])).toEqual([
      ['UserCreated', { key_id: s.keyId, su: true, console_user: 'Ops Alice' }],
    ]);
  });

  it('"send as": an su token with sub and console_user sends as the user, recorded with both', async () => {
    created(await s.request('POST', s.chat('/users'), { body: { id: 'dave', name: 'Dave' } }));
    created(await s.request('POST', s.chat('/rooms'), { body: { id: 'ops-room', name: 'ops', user_ids: ['dave'] }, token: consoleToken('ops.bob@example.com', 'dave') }));
    const sent = await s.request('POST', s.chat('/rooms/ops-room/messages'), {
      body: { parts: [{ type: 'text/plain', content: 'sent from the console' }] },
      token: consoleToken('ops.bob@example.com', 'dave'),
    });
    expect(sent.status).toBe(201);
    const room = await audit('/rooms/ops-room');
    const send = room.body.events.find((e: { type: string }) => e.type === 'MessageSent');
    expect(send.actor).toEqual({ key_id: s.keyId, user_id: 'dave', su: true, console_user: 'ops.bob@example.com' });
    // The message itself is dave's, as any SDK client sees it.
    const fetched = await s.request('GET', s.chat('/rooms/ops-room/messages?limit=1'));
    expect(fetched.body[0]).toMatchObject({ id: sent.body.message_id, user_id: 'dave' });
  });

  it('Feeds tokens carry it too: a publish is recorded with the console user', async () => {
    const iat = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign(
      { app: s.instanceId, iss: `api_keys/${s.keyId}`, iat, exp: iat + 900, su: true, console_user: 'Ops Alice', feeds: { permission: { path: '*', action: '*' } } },
      s.secret,
    );
    const published = await s.request('POST', `/services/feeds/v1/${s.instanceId}/feeds/console-feed/items`, { body: { items: ['hello'] }, token: feedsToken });
    expect(published.status).toBe(200);
    const byKey = await audit(`/actors/key:${s.keyId}?limit=1000`);
    const publish = byKey.body.events.filter((e: { stream: string }) => e.stream.includes('console-feed'));
    expect(publish.length).toBeGreaterThan(0);
    for (const event of publish) expect(event.actor).toMatchObject({ key_id: s.keyId, su: true, console_user: 'Ops Alice' });
  });

  it('Beams publish takes an su access token instead of the key secret (the console sends no secret), recorded with the console user', async () => {
    const publish = (token: string, instanceId = s.instanceId) =>
      s.request('POST', `/publish_api/v1/instances/${instanceId}/publishes/interests`, {
        body: { interests: ['console-test'], web: { notification: { title: 'Hello', body: 'from the console' } } },
        token,
      });
    const published = await publish(consoleToken('Ops Alice'));
    expect([published.status, published.body]).toEqual([200, { publishId: expect.any(String) }]);
    const byKey = await audit(`/actors/key:${s.keyId}?limit=1000`);
    const accepted = byKey.body.events.filter((e: { type: string }) => e.type === 'BeamsPublishAccepted');
    expect(accepted.map((e: { actor: unknown }) => e.actor)).toEqual([{ key_id: s.keyId, su: true, console_user: 'Ops Alice' }]);
    // The key secret still works as the Beams server SDKs send it.
    expect((await publish(s.secret)).status).toBe(200);
    // A token without su, or for another instance, is refused in Beams' error shape.
    const plain = await publish(s.token({ sub: 'dave' }));
    expect([plain.status, plain.body]).toEqual([403, { error: 'forbidden/su_required', description: expect.any(String) }]);
    const elsewhere = await publish(consoleToken('Ops Alice'), 'no-such-instance');
    expect(elsewhere.status).toBe(404);
    const forged = jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, su: true }, 'not-the-secret-of-this-key', { expiresIn: 60 });
    expect((await publish(forged)).status).toBe(401);
  });

  it('refuses a console_user that cannot name an operator (401 invalid_token), changing nothing', async () => {
    for (const bad of ['', 'x'.repeat(65), 'ops:alice', 'line\nbreak', 'ünïcode', 42, { name: 'x' }]) {
      const res = await s.request('POST', s.chat('/users'), { body: { id: 'mallory', name: 'M' }, token: consoleToken(bad) });
      expect([JSON.stringify(bad), res.status, res.body.error]).toEqual([JSON.stringify(bad), 401, 'services/chatkit/unauthorized/invalid_token']);
      expect(res.body.error_description).toMatch(/console_user/);
    }
    const iat = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign(
      { app: s.instanceId, iss: `api_keys/${s.keyId}`, iat, exp: iat + 900, su: true, console_user: 'a:b', feeds: { permission: { path: '*', action: '*' } } },
      s.secret,
    );
    const feeds = await s.request('POST', `/services/feeds/v1/${s.instanceId}/feeds/refused-feed/items`, { body: { items: ['x'] }, token: feedsToken });
    expect([feeds.status, feeds.body.error_description]).toEqual([403, expect.stringMatching(/console_user/)]);
    expect((await s.request('GET', s.chat('/users/mallory'))).status).toBe(404);
    expect((await s.request('GET', `/services/feeds/v1/${s.instanceId}/feeds/refused-feed/items`, { token: null })).body.items).toEqual([]);
  });

  it('tokens without console_user are recorded as before', async () => {
    created(await s.request('POST', s.chat('/users'), { body: { id: 'erin', name: 'Erin' }, token: s.token({ su: true }) }));
    expect((await audit('/users/erin')).body.events[0].actor).toEqual({ key_id: s.keyId, su: true });
  });
});
