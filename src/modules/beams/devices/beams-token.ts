import jwt from 'jsonwebtoken';
import type { KeyObject } from 'node:crypto';
import { DomainError } from '../../../shared/domain/errors';
import { tokenLifetimeRefusal } from '../../instances/authentication/token-lifetime';
import { isBeamsUserId } from '../publish/publish-request';

export const BEAMS_TOKEN_LIFETIME_SECONDS = 24 * 3600;
export const beamsTokenIssuer = (instanceId: string) => `https://${instanceId}.pushnotifications.pusher.com`;

const invalidToken = () => new DomainError('unauthorized', 'invalid_token', 'The Beams token is missing, malformed, expired or not signed for this instance');

/**
 * The user a Beams token proves (wire notes §5.4, as the server SDK's `generateToken` makes
 * it): HS256 with the secret of one of the instance's enabled keys, `iss` the instance's Beams
 * URL, `sub` the user, and an `exp` that has not passed and lies at most `maxLifetimeSeconds`
 * past its `iat` (TOKEN_MAX_LIFETIME_SECONDS).
 */
export function beamsTokenUser(token: string | null, instanceId: string, keys: Iterable<KeyObject>, maxLifetimeSeconds: number): string {
  if (!token) throw invalidToken();
  for (const key of keys) {
    try {
      const claims = jwt.verify(token, key, { algorithms: ['HS256'], issuer: beamsTokenIssuer(instanceId) });
      if (typeof claims === 'string' || typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || !isBeamsUserId(claims.sub)) {
        throw invalidToken();
      }
      const tooLong = tokenLifetimeRefusal(claims, maxLifetimeSeconds);
      if (tooLong) throw new DomainError('unauthorized', 'invalid_token', tooLong);
      return claims.sub;
    } catch (error) {
      if (error instanceof DomainError) throw error;
      // Signed with another key, or not valid at all: try the next key.
    }
  }
  throw invalidToken();
}

/** A Beams token for a user, signed with one of the instance's key secrets (the token provider issues these). */
export const signBeamsToken = (userId: string, instanceId: string, key: KeyObject): string =>
  jwt.sign({}, key, { algorithm: 'HS256', expiresIn: BEAMS_TOKEN_LIFETIME_SECONDS, issuer: beamsTokenIssuer(instanceId), subject: userId });
