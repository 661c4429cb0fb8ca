import jwt from 'jsonwebtoken';
import { InstanceKey } from './instance-locator';

/** A day, the originals' token lifetime. */
export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** Feeds tokens are backdated this much (and expire this much earlier), as pusher-platform-node 0.8 does (§5.3). */
export const FEEDS_TOKEN_LEEWAY_SECONDS = 10 * 60;

const nowInSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Signs the HS256 JWTs both libraries issue: `iss` names the key, the secret signs.
 * `instanceClaim` is `instance` for Chatkit services and `app` for Feeds (§5.1, §5.3);
 * `backdateSeconds` moves `iat` into the past and `exp` back by the same amount.
 */
export function signToken(
  key: InstanceKey,
  instanceClaim: { instance: string } | { app: string },
  claims: { sub?: string; su?: true; refresh?: true; [claim: string]: unknown },
  { lifetimeSeconds = TOKEN_LIFETIME_SECONDS, backdateSeconds = 0, expires = true } = {},
): string {
  const now = nowInSeconds();
  const payload: Record<string, unknown> = { ...instanceClaim, iss: `api_keys/${key.id}`, iat: now - backdateSeconds };
  if (expires) payload.exp = now + lifetimeSeconds - backdateSeconds;
  for (const [name, value] of Object.entries(claims)) if (value !== undefined) payload[name] = value;
  return jwt.sign(payload, key.secret, { algorithm: 'HS256' });
}

/** A token this key signed (any instance claim), or undefined when the signature, issuer or expiry is wrong. */
export function verifyToken(key: InstanceKey, token: unknown, clockToleranceSeconds = 0): Record<string, unknown> | undefined {
  if (typeof token !== 'string' || token === '') return undefined;
  try {
    const claims = jwt.verify(token, key.secret, { algorithms: ['HS256'], issuer: `api_keys/${key.id}`, clockTolerance: clockToleranceSeconds });
    return typeof claims === 'object' ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Reuses one token until shortly before it expires, so a busy server does not sign per request. */
export class CachedToken {
  private token = '';
  private renewAt = 0;
  constructor(private readonly issue: () => { token: string; lifetimeSeconds: number }) {}

  get(): string {
    const now = nowInSeconds();
    if (!this.token || now >= this.renewAt) {
      const { token, lifetimeSeconds } = this.issue();
      this.token = token;
      // Renew with a minute to spare (or halfway through, for short lifetimes).
      this.renewAt = now + Math.max(1, lifetimeSeconds - Math.min(60, lifetimeSeconds / 2));
    }
    return this.token;
  }
}
