import { startTestServer, TestServer } from '../support/test-server';

/**
 * The demo chat (docs/demo.md) is served at /demo, with its sign-up route, only while the
 * bootstrap instance's test token provider is on; the browser side is test/e2e/demo.browser.spec.ts.
 */
const signUp = (s: TestServer, instanceId: string, body: unknown) =>
  s.request('POST', `/services/parley_demo/v1/${instanceId}/users`, { body, token: null });

describe('the demo chat page and its sign-up', () => {
  describe('with the test token provider of the bootstrap instance on', () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ env: { RATE_LIMIT_ANONYMOUS_PER_ADDRESS: '8' } });
    }, 60_000);
    afterAll(() => s?.close());

    it('answers the page at /demo, preconfigured with that instance, its files named from /demo', async () => {
      const page = await s.request('GET', '/demo', { token: null });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.text).toContain(`<meta name="parley-config" content="{&quot;instanceLocator&quot;:&quot;${s.locator}&quot;}">`);
      const script = /<script defer src="(\/demo\/main-[A-Z0-9]+\.js)">/.exec(page.text)?.[1];
      expect(script).toBeDefined();
      const bundle = await s.request('GET', script!, { token: null });
      expect(bundle.status).toBe(200);
      expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await s.request('GET', '/demo/', { token: null })).text).toBe(page.text);
    });

    it('signs a visitor up once: 201 with the user, then 200 with the same user; a bad id 422, another instance 404', async () => {
      const created = await signUp(s, s.instanceId, { id: 'carol', name: 'Carol' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: 'carol', name: 'Carol', created_at: expect.any(String), updated_at: expect.any(String) });
      const again = await signUp(s, s.instanceId, { id: 'carol', name: 'Someone else' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(created.body);
      // The user the chat API knows, created with the visitor as its actor.
      expect((await s.request('GET', s.chat('/users/carol'))).body).toMatchObject({ id: 'carol', name: 'Carol' });
      const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/users/carol`);
      expect(audit.status).toBe(200);
      expect(JSON.stringify(audit.body)).toContain('"key_id":"demo"');

      const bad = await signUp(s, s.instanceId, { id: 'two words' });
      expect(bad.status).toBe(422);
      expect(bad.body.error_description).toContain('id must be 1 to 59 of A-Z a-z 0-9 _ . @ -');
      expect((await signUp(s, 'some-other-instance', { id: 'dave' })).status).toBe(404);
    });

    it('is limited per client address like the test token provider (RATE_LIMIT_ANONYMOUS_PER_ADDRESS)', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await signUp(s, s.instanceId, { id: `visitor-${i}` })).status);
      expect(statuses).toContain(429);
      expect(statuses.filter((status) => status !== 429).every((status) => status === 201)).toBe(true);
    });
  });

  describe('with the test token provider off (the default)', () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ env: { TOKEN_PROVIDER_ENABLED: 'false' } });
    }, 60_000);
    afterAll(() => s?.close());

    it('has no /demo page and no sign-up route: both 404 as unknown routes', async () => {
      for (const path of ['/demo', '/demo/', '/demo/rooms']) expect((await s.request('GET', path, { token: null })).status).toBe(404);
      expect((await signUp(s, s.instanceId, { id: 'erin' })).status).toBe(404);
      expect((await s.request('GET', s.chat('/users/erin'))).status).toBe(404);
    });
  });
});
