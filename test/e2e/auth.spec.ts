import jwt from 'jsonwebtoken';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

describe('authentication, errors and the test token provider', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const sign = (claims: object, secret = s.secret, options: jwt.SignOptions = { expiresIn: 600 }) =>
    jwt.sign(claims, secret, { algorithm: 'HS256', ...options });
  const base = () => ({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, su: true });

  it.each([
    ['no token', null, 'missing_token'],
    ['a wrong signature', () => sign(base(), 'not-the-secret'), 'invalid_token'],
    ['an unknown key', () => sign({ ...base(), iss: 'api_keys/other' }), 'invalid_token'],
    ['another instance', () => sign({ ...base(), instance: 'someone-else' }), 'invalid_token'],
    ['an expired token', () => sign({ ...base(), exp: Math.floor(Date.now() / 1000) - 10 }, s.secret, {}), 'token_expired'],
    ['no exp claim', () => sign(base(), s.secret, {}), 'invalid_token'],
  ])('answers 401 for %s', async (_, make, reason) => {
    const token = typeof make === 'function' ? make() : make;
    const res = await s.request('GET', s.chat('/users'), { token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: `services/chatkit/unauthorized/${reason}`, error_description: expect.any(String) });
  });

  it('answers 404 for an instance that does not exist', async () => {
    const res = await s.request('GET', '/services/chatkit/v6/no-such-instance/users');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('services/chatkit/not_found/instance_not_found');
  });

  it('answers unknown routes and versions with 404 JSON', async () => {
    const route = await s.request('GET', '/nothing/here');
    expect(route.status).toBe(404);
    expect(route.body).toEqual({ error: 'not_found/route_not_found', error_description: expect.any(String) });
    const version = await s.request('GET', `/services/chatkit/v3/${s.instanceId}/users/alice`);
    expect(version.status).toBe(404);
    expect(version.body.error).toBe('services/chatkit/not_found/route_not_found');
  });

  it('serves /health (readiness, with what it checked) and /health/live (liveness)', async () => {
    // Message search folds in batches up to a second behind the others: every projection caught up, soon.
    const res = await eventually(
      async () => {
        const answer = await s.request('GET', '/health', { token: null });
        return Object.values(answer.body.projections ?? {}).every((p: any) => p.state === 'running' && p.lag_events === 0) && answer;
      },
      { what: 'every projection running and caught up' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', problems: [], live_log: { state: 'following' }, storage: { state: 'ok' } });
    expect(Object.values(res.body.projections).map((p: any) => p.state)).toEqual(expect.arrayContaining(['running']));
    const live = await s.request('GET', '/health/live', { token: null });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'alive' });
  });

  describe('test token provider', () => {
    const url = () => `/services/chatkit_token_provider/v1/${s.instanceId}/token`;

    it('issues a token for user_id in the query that the chat API accepts', async () => {
      const res = await s.request('POST', `${url()}?user_id=alice`, { token: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        access_token: expect.any(String),
        user_id: 'alice',
        token_type: 'access_token',
        expires_in: 86400,
      });
      const claims = jwt.verify(res.body.access_token, s.secret) as jwt.JwtPayload;
      expect(claims).toMatchObject({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, sub: 'alice' });
      expect((await s.request('GET', s.chat('/users'), { token: res.body.access_token })).status).toBe(200);
    });

    it('takes the JSON body form and the form-encoded body chatkit-client sends', async () => {
      const json = await s.request('POST', url(), { body: { grant_type: 'client_credentials', user_id: 'bob' }, token: null });
      expect(json.status).toBe(200);
      expect(json.body.user_id).toBe('bob');
      const form = await s.request('POST', `${url()}?user_id=carol`, {
        rawBody: 'grant_type=client_credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        token: null,
      });
      expect(form.status).toBe(200);
      expect(form.body.user_id).toBe('carol');
    });

    it('refuses bad input with 4xx', async () => {
      const cases: [string, Parameters<TestServer['request']>[2], number][] = [
        [url(), {}, 400],
        [`${url()}?user_id=${'x'.repeat(60)}`, {}, 400],
        [`${url()}?user_id=with%20space`, {}, 400],
        [`${url()}?user_id=a`, { body: { grant_type: 'client_credentials', user_id: 'b' } }, 400],
        [url(), { body: { grant_type: 'password', user_id: 'b' } }, 400],
        [url(), { body: { user_id: 'b' } }, 400],
        [`${url()}?user_id=a`, { rawBody: 'grant_type=password', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 400],
        [`${url()}?user_id=a`, { rawBody: 'null', headers: { 'content-type': 'application/json' } }, 400],
        [`${url()}?user_id=a`, { rawBody: '["client_credentials"]', headers: { 'content-type': 'application/json' } }, 400],
      ];
      for (const [path, options, status] of cases) {
        const res = await s.request('POST', path, { ...options, token: null });
        expect([path, res.status]).toEqual([path, status]);
        expect(res.body.error).toMatch(/^services\/chatkit_token_provider\//);
      }
    });

    it('answers 404 for an unknown instance', async () => {
      const res = await s.request('POST', '/services/chatkit_token_provider/v1/nope/token?user_id=a', { token: null });
      expect(res.status).toBe(404);
    });
  });
});
