import type { FastifyContextConfig, FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';

/**
 * Serves a browser page that `npm run build` bundled into `dist/web/<page>/`
 * (scripts/build-web.js): the console at /console, the demo chat at /demo.
 *
 * Every file is read once, when the routes are registered: a request only looks a name up in a
 * map, so no path from a request ever reaches the file system. The bundle's names carry their
 * content hash, so they are cached for a year (`immutable`); `index.html` names them and is
 * revalidated each time (`no-cache`), so a new build is picked up at the next load. Any other path
 * under the prefix answers the page (the page routes in the browser). Nothing here runs for a
 * request outside the prefix.
 */
export interface BuiltPage {
  /** The folder name under web/ and dist/web/. */
  readonly page: string;
  /** Where it is served, e.g. `/console`. */
  readonly prefix: string;
  /**
   * Settings the page reads at start (`readPageConfig()` in web/shared/page-config.ts), written into
   * `<meta name="parley-config">` in place of `<!-- parley:config -->`. Never a secret: anyone may load
   * the page.
   */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Where the built pages are (default: dist/web of this checkout). */
  readonly builtDir?: string;
  /**
   * The routes' Fastify `config`: what they declare, `{ access: Access.public }` for a page anyone
   * may load (every route of the server declares a rule: src/modules/roles/declared-routes.ts).
   */
  readonly routeConfig?: FastifyContextConfig;
}

const CONFIG_MARK = '<!-- parley:config -->';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
/**
 * The pages load only their own files and talk to this server's APIs (HTTP and WebSocket);
 * nothing inline runs, and no other site may frame them.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface ServedFile {
  readonly body: Buffer;
  readonly type: string;
  readonly cache: string;
}

/** dist/web of this checkout, from dist/src/shared/http (built) or src/shared/http (ts-jest). */
export function defaultBuiltPagesDir(): string {
  const root = resolve(__dirname, '..', '..', '..');
  return root.endsWith(`${'/'}dist`) || root.endsWith('\\dist') ? join(root, 'web') : join(root, 'dist', 'web');
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function loadPage(page: BuiltPage): Map<string, ServedFile> | undefined {
  const dir = join(page.builtDir ?? defaultBuiltPagesDir(), page.page);
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const files = new Map<string, ServedFile>();
  for (const name of readdirSync(dir)) {
    if (name === 'index.html' || name === 'manifest.json') continue;
    files.set(name, { body: readFileSync(join(dir, name)), type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream', cache: IMMUTABLE });
  }
  const config = escapeAttribute(JSON.stringify(page.config ?? {}));
  // The bundle named by its absolute path: the page answers any path under the prefix
  // (/console/rooms/lobby), where a relative name would resolve to /console/rooms/main-….js.
  const html = readFileSync(join(dir, 'index.html'), 'utf8')
    .replace(CONFIG_MARK, `<meta name="parley-config" content="${config}">`)
    .replace(/\b(src|href)="([^"/:]+)"/g, (whole, attribute: string, name: string) => (files.has(name) ? `${attribute}="${page.prefix}/${name}"` : whole));
  files.set('index.html', { body: Buffer.from(html), type: CONTENT_TYPES['.html'], cache: 'no-cache' });
  return files;
}

function send(reply: FastifyReply, file: ServedFile) {
  return reply.headers(PAGE_HEADERS).header('content-type', file.type).header('cache-control', file.cache).send(file.body);
}

/**
 * Registers GET (and HEAD) `<prefix>`, `<prefix>/` and `<prefix>/*`. A page that was not built
 * answers 503 with a JSON error saying so.
 */
export function registerBuiltPage(fastify: FastifyInstance, page: BuiltPage): void {
  const files = loadPage(page);
  const handler = async (request: { params: unknown }, reply: FastifyReply) => {
    if (!files) {
      return reply.code(503).send({ error: 'services/page_not_built', error_description: `The ${page.page} page was not built: run npm run build` });
    }
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    const asset = rest.includes('/') ? undefined : files.get(rest);
    if (asset && rest !== 'index.html') return send(reply, asset);
    // A missing hashed asset is a stale page: answer 404, not the page, so the browser says so.
    if (/\.[a-z0-9]+$/i.test(rest)) return reply.code(404).send({ error: 'services/not_found', error_description: `No ${rest} in the ${page.page} page` });
    return send(reply, files.get('index.html')!);
  };
  const options = page.routeConfig ? { config: page.routeConfig } : {};
  fastify.get(page.prefix, options, handler);
  fastify.get(`${page.prefix}/*`, options, handler);
}
