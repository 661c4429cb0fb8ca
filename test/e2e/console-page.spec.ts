/**
 * /console is served only with CONSOLE_ENABLED=true (issue 21): off, it is an unknown path like
 * any other; on, the built page with its security headers and caching, told only what is public.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../support/test-server';

const ADMIN_SECRET = 'console-admin-secret-of-at-least-32-characters';
const manifest = () => JSON.parse(readFileSync(join(__dirname, '..', '..', 'dist', 'web', 'console', 'manifest.json'), 'utf8')) as { files: { name: string }[] };

describe('the console page', () => {
  describe('off by default', () => {
    let s: TestServer;
    beforeAll(async () => (s = await startTestServer()));
    afterAll(() => s.close());

    it('answers /console and every path under it 404, as an unknown route', async () => {
      const script = manifest().files.find((f) => f.name.endsWith('.js'))!.name;
      for (const path of ['/console', '/console/', '/console/users', `/console/${script}`]) {
        const answer = await s.request('GET', path, { token: null });
        expect({ path, status: answer.status }).toEqual({ path, status: 404 });
        expect(answer.text).not.toContain('<html');
      }
    });
  });

  describe('with CONSOLE_ENABLED=true', () => {
    let s: TestServer;
    beforeAll(async () => (s = await startTestServer({ env: { CONSOLE_ENABLED: 'true', CONSOLE_ADMIN_SECRET: ADMIN_SECRET } })));
    afterAll(() => s.close());

    it('serves the page at every screen path, revalidated, under a CSP without inline scripts, told nothing secret', async () => {
      for (const path of ['/console', '/console/', '/console/rooms/lobby']) {
        const answer = await s.request('GET', path, { token: null });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
        expect(answer.headers.get('cache-control')).toBe('no-cache');
        expect(answer.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(answer.headers.get('x-frame-options')).toBe('DENY');
        expect(answer.text).toContain('<title>Parley console</title>');
        expect(answer.text).not.toContain(ADMIN_SECRET);
        expect(answer.text).not.toContain(s.secret);
      }
      const page = (await s.request('GET', '/console/', { token: null })).text;
      const config = JSON.parse(/<meta name="parley-config" content="([^"]*)">/.exec(page)![1].replace(/&quot;/g, '"'));
      expect(config).toEqual({ deployment_sign_in: true, instance_locator: s.locator });
    });

    it('serves the hashed bundle for a year, immutable; a missing one is 404', async () => {
      const names = manifest().files.map((f) => f.name).filter((name) => /\.(js|css)$/.test(name));
      expect(names.some((name) => name.endsWith('.js'))).toBe(true);
      for (const name of names) {
        const answer = await s.request('GET', `/console/${name}`, { token: null });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
      expect((await s.request('GET', '/console/main-STALE000.js', { token: null })).status).toBe(404);
    });
  });
});
