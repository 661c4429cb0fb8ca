import { Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { KeyObject } from 'node:crypto';
import { DomainError, notFound } from '../../../shared/domain/errors';
import { KeyRing } from './key-ring';

/** Who a request acts as, from its verified token. */
export interface RequestActor {
  readonly instanceId: string;
  readonly keyId: string;
  readonly userId?: string;
  readonly su: boolean;
}

export const unauthorized = (reason: string, description: string) =>
  new DomainError('unauthorized', reason, description);

const ISSUER = /^api_keys\/(.+)$/;
/** Verified tokens remembered, so a client's repeated calls skip the HMAC (bounded, oldest out first). */
const VERIFIED_CACHE_SIZE = 10_000;

interface Verified {
  readonly actor: RequestActor;
  readonly key: KeyObject;
  readonly expiresAtMs: number;
}

/**
 * Verifies the HS256 access tokens the Pusher SDKs mint (wire study §5.1): `iss` names the
 * instance key whose secret signed it, `instance` must be the instance addressed, and `exp`
 * must lie ahead. One verifier serves HTTP, SUBSCRIBE and the WebSocket bridge.
 */
@Injectable()
export class AccessTokenVerifier {
  private readonly verified = new Map<string, Verified>();

  constructor(private readonly keyRing: KeyRing) {}

  async verify(authorization: string | undefined, instanceId: string): Promise<RequestActor> {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance) throw notFound('instance_not_found', `The instance "${instanceId}" does not exist`);
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw unauthorized('missing_token', 'An Authorization header with a Bearer token is required');
    const token = m[1];
    // A remembered token counts only while it is unexpired, for this instance, and its key still active.
    const hit = this.verified.get(token);
    if (
      hit &&
      hit.actor.instanceId === instanceId &&
      hit.expiresAtMs > Date.now() &&
      instance.keys.get(hit.actor.keyId) === hit.key
    ) {
      return hit.actor;
    }
    const verified = this.check(token, instanceId, instance.keys);
    this.verified.set(token, verified);
    if (this.verified.size > VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    return verified.actor;
  }

  private check(token: string, instanceId: string, keys: ReadonlyMap<string, KeyObject>): Verified {
    const decoded = jwt.decode(token, { json: true });
    const issuer = typeof decoded?.iss === 'string' ? ISSUER.exec(decoded.iss) : null;
    if (!issuer) throw unauthorized('invalid_token', 'The token has no "iss" claim of the form api_keys/<key_id>');
    const secret = keys.get(issuer[1]);
    if (!secret) throw unauthorized('invalid_token', 'The token was signed with an unknown or disabled key');
    let claims: jwt.JwtPayload;
    try {
      claims = jwt.verify(token, secret, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw unauthorized('token_expired', 'The token has expired');
      throw unauthorized('invalid_token', 'The token signature or claims are invalid');
    }
    if (claims.instance !== instanceId) {
      throw unauthorized('invalid_token', 'The token was issued for another instance');
    }
    if (typeof claims.exp !== 'number') throw unauthorized('invalid_token', 'The token has no "exp" claim');
    return {
      actor: {
        instanceId,
        keyId: issuer[1],
        userId: typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined,
        su: claims.su === true,
      },
      key: secret,
      expiresAtMs: claims.exp * 1000,
    };
  }
}
