import { badRequest } from '../../../shared/domain/errors';

/** What the Web SDK sends as a web device's `token`: base64 of the browser's `PushSubscription` JSON. */
export interface WebPushSubscription {
  readonly endpoint: string;
  readonly keys: { readonly p256dh: string; readonly auth: string };
}

const MAX_TOKEN_LENGTH = 8 * 1024;
const BASE64URL = /^[A-Za-z0-9_-]+=*$/;

const invalidToken = (why: string) => badRequest('invalid_token', `The token must be base64 of a Web Push subscription (${why})`);

/**
 * Whether a push endpoint's host is one of `allowedHosts` (BEAMS_WEB_PUSH_HOSTS): an exact host,
 * or `*.<domain>` for any host under the domain. The device API is open to anyone, so the server
 * POSTs only to push services, never to an address a caller chose inside the network (SSRF).
 */
export function isAllowedPushHost(endpoint: string | URL, allowedHosts: readonly string[]): boolean {
  // The URL parser lowercases the host; a trailing dot names the same host.
  const host = new URL(endpoint).hostname.replace(/\.$/, '');
  return allowedHosts.some((allowed) => (allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : host === allowed));
}

/**
 * Parses and checks the SDK's token; the endpoint must be an https URL at an allowed push
 * service host, and both keys base64url.
 */
export function parseWebPushToken(token: unknown, allowedHosts: readonly string[]): WebPushSubscription {
  if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH) throw invalidToken('a non-empty string up to 8 KiB');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
  } catch {
    throw invalidToken('not base64 of JSON');
  }
  const { endpoint, keys } = (json ?? {}) as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  let url: URL;
  try {
    url = new URL(String(endpoint));
  } catch {
    throw invalidToken('endpoint is not a URL');
  }
  // Push services are HTTPS (and web-push speaks only HTTPS).
  if (url.protocol !== 'https:') throw invalidToken('endpoint is not an https URL');
  if (!isAllowedPushHost(url, allowedHosts)) {
    throw badRequest('push_service_not_allowed', `The endpoint's host "${url.hostname}" is not a push service this server delivers to`);
  }
  const p256dh = keys?.p256dh;
  const auth = keys?.auth;
  if (typeof p256dh !== 'string' || !BASE64URL.test(p256dh) || typeof auth !== 'string' || !BASE64URL.test(auth)) {
    throw invalidToken('keys.p256dh and keys.auth must be base64url');
  }
  return { endpoint: url.href, keys: { p256dh, auth } };
}
