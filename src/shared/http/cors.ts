import type { FastifyCorsOptions } from '@fastify/cors';
import type { IncomingMessage } from 'node:http';

/** Which browser origins may call Parley: any (`*`), or a list (empty: none but its own). */
export type CorsOrigins = '*' | readonly string[];

/**
 * The headers the browser SDKs send (wire study §7.13). `X-SDK-*` is spelled out: preflight
 * answers cannot name a prefix, and these four are every one @pusher/platform and
 * chatkit-client send.
 */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Last-Event-Id',
  'X-SDK-Product',
  'X-SDK-Version',
  'X-SDK-Language',
  'X-SDK-Platform',
  'X-Request-Id',
];
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'SUBSCRIBE'];
/** Seconds a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * @fastify/cors options (through Nest's `enableCors`), or null when no other origin may call.
 * No credentials: the SDKs authenticate with bearer tokens, never cookies, so `*` lets no page
 * act with a visitor's ambient credentials.
 */
export function corsOptions(origins: CorsOrigins): FastifyCorsOptions | null {
  if (origins !== '*' && origins.length === 0) return null;
  return {
    origin: origins === '*' ? '*' : [...origins],
    methods: ALLOWED_METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    // A page can read the id its request was logged and audited under, and when a 429 lets it retry.
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // An OPTIONS that is no preflight gets the CORS headers and 204, not a text/plain 400.
    strictPreflight: false,
  };
}

/**
 * Whether a WebSocket upgrade may proceed: browsers always send `Origin` on one (other clients
 * need not, and are not browsers a page could abuse), so it must be this server's own origin
 * or one that CORS_ORIGINS allows.
 */
export function upgradeOriginAllowed(origins: CorsOrigins, request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined || origins === '*') return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === request.headers.host || origins.includes(origin);
}
