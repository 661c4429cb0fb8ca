/**
 * @jest-environment node
 */
import { loadConfig } from '../../src/config/config';
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestResponse, TestServer } from '../support/test-server';
import { sleep } from '../support/waiting';

const WINDOW_MS = 2_000;
const PER_USER = 4;
const PER_INSTANCE = 7;

const limitHeaders = (res: TestResponse) => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: Number(res.headers.get('x-ratelimit-reset')),
});

describe('chat, cursors and files rate limits (per user and per instance, su exempt)', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const getUser = (sub: string, token = as(sub)) => s.request('GET', s.chat(`/users/${sub}`), { token });
  const cursorsOf = (sub: string) => `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/users/${sub}`;

  beforeAll(async () => {
    s = await startTestServer({
      env: { RATE_LIMIT_PER_USER: String(PER_USER), RATE_LIMIT_PER_INSTANCE: String(PER_INSTANCE), RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) },
    });
    for (const id of ['ann', 'bob', 'cat', 'dan', 'eve', 'fay']) {
      expect((await s.request('POST', s.chat('/users'), { body: { id, name: id } })).status).toBe(201);
    }
  });
  afterAll(() => s.close());
  // Windows are aligned on multiples of their length: each test starts at the beginning of one
  // of its own, so its handful of requests fits in it and no count carries over.
  beforeEach(async () => {
    await sleep(WINDOW_MS - (Date.now() % WINDOW_MS) + 10);
  });

  it('answers 429 in the Chatkit error shape with Retry-After after the limit, counting cursors calls too, and recovers after the window', async () => {
    const first = await getUser('ann');
    expect(first.status).toBe(200);
    expect(limitHeaders(first)).toEqual({ limit: String(PER_USER), remaining: String(PER_USER - 1), reset: expect.any(Number) });
    expect(limitHeaders(first).reset).toBeGreaterThanOrEqual(1);
    expect(limitHeaders(first).reset).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect((await s.request('GET', cursorsOf('ann'), { token: as('ann') })).status).toBe(200);
    for (let i = 2; i < PER_USER; i++) expect((await getUser('ann')).status).toBe(200);

    const refused = await getUser('ann');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'services/chatkit/too_many_requests/rate_limited', error_description: expect.stringContaining('this user') });
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(limitHeaders(refused)).toMatchObject({ limit: String(PER_USER), remaining: '0' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    // Refused on the cursors API as well: one allowance per user across the APIs.
    expect((await s.request('GET', cursorsOf('ann'), { token: as('ann') })).status).toBe(429);

    await sleep(retryAfter * 1000);
    const again = await getUser('ann');
    expect(again.status).toBe(200);
    expect(limitHeaders(again).remaining).toBe(String(PER_USER - 1));
  });

  it('keeps one allowance per user, and one per instance that all users share', async () => {
    for (let i = 0; i < PER_USER; i++) expect((await getUser('bob')).status).toBe(200);
    expect((await getUser('bob')).status).toBe(429);
    // Bob's refusal was not counted against the instance: 4 of its 7 are spent.
    const cat = await getUser('cat');
    expect(cat.status).toBe(200);
    // Cat has 3 left of 4, the instance 2 of 7: the headers show the tighter.
    expect(limitHeaders(cat)).toEqual({ limit: String(PER_INSTANCE), remaining: '2', reset: expect.any(Number) });
    expect((await getUser('dan')).status).toBe(200);
    const eve = await getUser('eve'); // the 7th of the instance: the instance limit is now the tighter one
    expect(eve.status).toBe(200);
    expect(limitHeaders(eve)).toMatchObject({ limit: String(PER_INSTANCE), remaining: '0' });
    const fay = await getUser('fay');
    expect(fay.status).toBe(429);
    expect(fay.body.error).toBe('services/chatkit/too_many_requests/rate_limited');
    expect(fay.body.error_description).toContain('this instance');
    expect(fay.headers.get('retry-after')).not.toBeNull();
  });

  it('does not limit su tokens, and does not count requests without a valid token', async () => {
    for (let i = 0; i < PER_INSTANCE + 3; i++) {
      const res = await s.request('GET', s.chat('/users/ann'));
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    for (let i = 0; i < PER_INSTANCE + 3; i++) {
      expect((await getUser('ann', s.token({ sub: 'ann', expiresIn: -10 }))).status).toBe(401);
      expect((await s.request('GET', s.chat('/users/ann'), { token: null })).status).toBe(401);
    }
    const counted = await getUser('ann');
    expect(counted.status).toBe(200);
    expect(limitHeaders(counted).remaining).toBe(String(PER_USER - 1));
  });

  it('leaves subscriptions, health and CORS alone: streams open past the limit, and a 429 carries CORS headers', async () => {
    for (let i = 0; i < PER_USER; i++) expect((await getUser('dan')).status).toBe(200);
    const refused = await fetch(`${s.baseUrl}${s.chat('/users/dan')}`, {
      headers: { origin: 'http://app.example.test', authorization: `Bearer ${as('dan')}` },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const stream = await openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, { authorization: `Bearer ${as('dan')}` });
    try {
      expect(stream.status).toBe(200);
      expect((await stream.nextEvent()).body.event_name).toBe('initial_state');
    } finally {
      await stream.close();
    }
    expect((await s.request('GET', '/health', { token: null })).status).toBe(200);
  });
});

describe('rate limits set to 0', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { RATE_LIMIT_PER_USER: '0', RATE_LIMIT_PER_INSTANCE: '0', RATE_LIMIT_WINDOW_MS: '60000' } });
    await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } });
  });
  afterAll(() => s.close());

  it('limit nothing and add no headers', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await s.request('GET', s.chat('/users/ann'), { token: s.token({ sub: 'ann' }) });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

describe('the per-instance limit by default', () => {
  let s: TestServer;
  beforeAll(async () => {
    // Only the per-user limit switched off: whatever still limits comes from the defaults.
    s = await startTestServer({ env: { RATE_LIMIT_PER_USER: '0' } });
    await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } });
  });
  afterAll(() => s.close());

  it('is off: a busy instance is limited by nothing but its users\' own allowances', async () => {
    const res = await s.request('GET', s.chat('/users/ann'), { token: s.token({ sub: 'ann' }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('rate limit settings', () => {
  it('default to 500 per user in 10 s windows, no per-instance limit, su exempt', () => {
    expect(loadConfig({}).rateLimits).toMatchObject({ perUser: 500, perInstance: 0, windowMs: 10_000, su: false });
    expect(loadConfig({ RATE_LIMIT_SU: 'true' }).rateLimits.su).toBe(true);
  });

  it.each([
    ['RATE_LIMIT_PER_USER', '-1', /^RATE_LIMIT_PER_USER must be a whole number of requests from 0 to/],
    ['RATE_LIMIT_PER_INSTANCE', 'lots', /^RATE_LIMIT_PER_INSTANCE must be a whole number of requests from 0 to/],
    ['RATE_LIMIT_WINDOW_MS', '0', /^RATE_LIMIT_WINDOW_MS must be a whole number of milliseconds from 100 to/],
    ['RATE_LIMIT_SU', 'yes', /^RATE_LIMIT_SU must be true or false, got "yes"$/],
  ])('refuse %s=%s with what it accepts', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});

describe('the APIs that take no credential: the Beams device API and the test token provider', () => {
  /** One window an hour long: a test's requests all land in one, and the limits never reset under it. */
  const HOUR = 3_600_000;
  /** Waits, if need be, until the current window has at least 30 s left (it almost always has). */
  const awayFromWindowEdge = async () => {
    while (HOUR - (Date.now() % HOUR) < 30_000) await sleep(1_000);
  };
  const limits = (extra: Record<string, string> = {}) => ({
    env: { RATE_LIMIT_ANONYMOUS_PER_ADDRESS: '3', RATE_LIMIT_ANONYMOUS_PER_INSTANCE: '5', RATE_LIMIT_WINDOW_MS: String(HOUR), ...extra },
  });
  const vapidKey = (s: TestServer, headers: Record<string, string> = {}) =>
    s.request('GET', `/device_api/v1/instances/${s.instanceId}/web-vapid-public-key`, { token: null, headers });
  const testToken = (s: TestServer, user: string) =>
    s.request('POST', `/services/chatkit_token_provider/v1/${s.instanceId}/token?user_id=${user}`, { token: null });

  beforeEach(awayFromWindowEdge);

  it('limit the device API per client address: 429 in Beams\' {error, description} shape with Retry-After', async () => {
    const s = await startTestServer(limits());
    try {
      const first = await vapidKey(s);
      expect(first.status).toBe(200);
      expect(limitHeaders(first)).toMatchObject({ limit: '3', remaining: '2' });
      const registered = await s.request('POST', `/device_api/v1/instances/${s.instanceId}/devices/web`, { body: {}, token: null });
      expect(registered.status).toBe(400); // counted all the same: a refusal costs the caller too
      expect((await vapidKey(s)).status).toBe(200);
      const refused = await vapidKey(s);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ error: 'too_many_requests/rate_limited', description: expect.stringMatching(/^More than 3 requests in 3600 s for this address; nothing was done/) });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The authenticated APIs do not draw on it.
      expect((await s.request('GET', s.chat('/users'))).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('limit the test token provider per client address, answered in the Chatkit shape', async () => {
    const s = await startTestServer(limits());
    try {
      for (const user of ['a', 'b', 'c']) expect((await testToken(s, user)).status).toBe(200);
      const refused = await testToken(s, 'd');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        error: 'services/chatkit_token_provider/too_many_requests/rate_limited',
        error_description: expect.stringContaining('for this address'),
      });
    } finally {
      await s.close();
    }
  });

  it('limit them per instance across addresses, and count the address a proxy named in TRUST_PROXY forwards', async () => {
    const s = await startTestServer(limits({ TRUST_PROXY: '127.0.0.1' }));
    try {
      const from = (address: string) => vapidKey(s, { 'x-forwarded-for': address });
      for (let i = 0; i < 3; i++) expect((await from('198.51.100.1')).status).toBe(200);
      expect((await from('198.51.100.1')).status).toBe(429);
      // Another client behind the proxy has its own allowance, until the instance's is spent (5).
      expect((await from('198.51.100.2')).status).toBe(200);
      expect((await from('198.51.100.2')).status).toBe(200);
      const instanceSpent = await from('198.51.100.3');
      expect(instanceSpent.status).toBe(429);
      expect(instanceSpent.body.description).toContain('for this instance');
    } finally {
      await s.close();
    }
  });

  it('ignore X-Forwarded-For from a client that is no trusted proxy', async () => {
    const s = await startTestServer(limits());
    try {
      for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) expect((await vapidKey(s, { 'x-forwarded-for': address })).status).toBe(200);
      expect((await vapidKey(s, { 'x-forwarded-for': '198.51.100.4' })).status).toBe(429);
    } finally {
      await s.close();
    }
  });

  it('default to 600 per address and 6,000 per instance per window; TRUST_PROXY takes addresses, ranges and presets only', () => {
    expect(loadConfig({}).rateLimits).toMatchObject({ anonymousPerAddress: 600, anonymousPerInstance: 6_000 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback,::1' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/^TRUST_PROXY must be a comma-separated list of IP addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "true"$/);
  });
});
