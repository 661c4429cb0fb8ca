import { Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
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

/**
 * Verifies the HS256 access tokens the Pusher SDKs mint (wire study §5.1): `iss` names the
 * instance key whose secret signed it, `instance` must be the instance addressed, and `exp`
 * must lie ahead. One verifier serves HTTP, SUBSCRIBE and the WebSocket bridge.
 */
@Injectable()
export class AccessTokenVerifier {
  constructor(private readonly keyRing: KeyRing) {}

  async verify(authorization: string | undefined, instanceId: string): Promise<RequestActor> {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance) throw notFound('instance_not_found', `The instance "${instanceId}" does not exist`);
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) throw unauthorized('missing_token', 'An Authorization header with a Bearer token is required');
    const token = m[1];
    const decoded = jwt.decode(token, { json: true });
    const issuer = typeof decoded?.iss === 'string' ? ISSUER.exec(decoded.iss) : null;
    if (!issuer) throw unauthorized('invalid_token', 'The token has no "iss" claim of the form api_keys/<key_id>');
    const secret = instance.keys.get(issuer[1]);
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
      instanceId,
      keyId: issuer[1],
      userId: typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined,
      su: claims.su === true,
    };
  }
}
