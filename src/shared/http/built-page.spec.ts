import Fastify from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerBuiltPage } from './built-page';

describe('registerBuiltPage (a page bundled into dist/web/<page>)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-built-page-'));
    mkdirSync(join(dir, 'demo'));
    writeFileSync(join(dir, 'demo', 'index.html'), '<html><head><!-- parley:config --></head><script src="main-ABC123.js"></script></html>');
    writeFileSync(join(dir, 'demo', 'main-ABC123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'demo', 'manifest.json'), '{}');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function serve(config?: Record<string, unknown>) {
    const fastify = Fastify();
    registerBuiltPage(fastify, { page: 'demo', prefix: '/demo', builtDir: dir, config });
    registerBuiltPage(fastify, { page: 'absent', prefix: '/absent', builtDir: dir });
    await fastify.ready();
    return fastify;
  }

  it('answers the page with its settings, revalidated, and the hashed bundle cached for a year', async () => {
    const fastify = await serve({ instance_locator: 'v1:local:<app>"' });
    const page = await fastify.inject({ url: '/demo' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('<meta name="parley-config" content="{&quot;instance_locator&quot;:&quot;v1:local:&lt;app&gt;\\&quot;&quot;}">');
    // Named from the prefix: the page at /demo (no slash) and at /demo/rooms/42 loads the same file.
    expect(page.body).toContain('<script src="/demo/main-ABC123.js">');
    const bundle = await fastify.inject({ url: '/demo/main-ABC123.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.body).toBe('console.log(1)');
    // The page's own routes answer the page, naming its bundle by absolute path (a relative
    // name would resolve under /demo/rooms/); a missing asset and paths out of the folder do not.
    expect(page.body).toContain('<script src="/demo/main-ABC123.js">');
    const deep = await fastify.inject({ url: '/demo/rooms/42' });
    expect(deep.body).toContain('parley-config');
    expect(deep.body).toContain('<script src="/demo/main-ABC123.js">');
    expect((await fastify.inject({ url: '/demo/main-OLD.js' })).statusCode).toBe(404);
    expect((await fastify.inject({ url: '/demo/manifest.json' })).statusCode).toBe(404);
    expect((await fastify.inject({ url: '/demo/..%2f..%2fpackage.json' })).statusCode).toBe(404);
    await fastify.close();
  });

  it('says clearly when the page was not built', async () => {
    const fastify = await serve();
    const answer = await fastify.inject({ url: '/absent' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toEqual({ error: 'services/page_not_built', error_description: 'The absent page was not built: run npm run build' });
    await fastify.close();
  });
});
