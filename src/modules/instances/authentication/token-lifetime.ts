import { DomainError } from '../../../shared/domain/errors';

/**
 * Why a token lives too long, or null. Its lifetime runs from when it was issued (`iat`, or
 * now when it has none or claims a later one) to its `exp`: a token expiring in 2100 is as
 * good as a password, and one stolen must stop working within the maximum
 * (TOKEN_MAX_LIFETIME_SECONDS) however it was minted. Feeds tokens, issued 10 minutes in the
 * past, count from their `iat`.
 */
export function tokenLifetimeRefusal(
  claims: { iat?: unknown; exp?: unknown },
  maxSeconds: number,
  nowMs = Date.now(),
  bound = 'TOKEN_MAX_LIFETIME_SECONDS',
): string | null {
  if (typeof claims.exp !== 'number') return null; // each verifier refuses a token without exp in its own words
  const now = Math.floor(nowMs / 1000);
  const issued = typeof claims.iat === 'number' && claims.iat < now ? claims.iat : now;
  const lifetime = claims.exp - issued;
  if (lifetime <= maxSeconds) return null;
  return `The token lives ${lifetime} seconds from its issue to its expiry; this server accepts at most ${maxSeconds} (${bound})`;
}

export const tokenLivesTooLong = (description: string) => new DomainError('unauthorized', 'token_lifetime_too_long', description);
