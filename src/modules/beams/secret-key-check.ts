import { Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError, notFound } from '../../shared/domain/errors';
import { Actor } from '../../shared/domain/event';
import { bearerCredential } from '../../shared/http/bearer';
import { actingInRequest } from '../../shared/observability/request-context';
import { AccessTokenVerifier } from '../instances/authentication/access-token';
import { auditActor, requireSu } from '../instances/authentication/access-token.guard';
import { KeyRing } from '../instances/authentication/key-ring';

const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest();

export const incorrectKey = () => new DomainError('unauthorized', 'incorrect_key', 'The secret key is incorrect for this instance');
export const instanceNotFound = (id: string) => notFound('instance_not_found', `There is no instance "${id}"`);

/** Whether the credential is an access token (a JWT naming an instance key as its issuer) rather than a key's secret. */
const isAccessToken = (credential: string): boolean => {
  const claims = jwt.decode(credential, { json: true });
  return typeof claims?.iss === 'string' && claims.iss.startsWith('api_keys/');
};

/**
 * Beams server SDK calls carry the raw secret of an instance key (`Authorization: Bearer
 * <secret>`), not a JWT. It is compared with every enabled key's secret in constant time:
 * both sides are hashed first (so lengths leak nothing) and every key is compared, a match
 * or not. Answers the id of the key that matched, for the audit trail; never the secret.
 *
 * An su access token of the instance is taken instead, so that a caller that must not send a
 * secret (the operator console, which signs tokens in the browser) can publish: it is
 * verified as on every other API, and recorded with its user and console user.
 */
@Injectable()
export class SecretKeyCheck {
  constructor(
    private readonly keyRing: KeyRing,
    private readonly tokens: AccessTokenVerifier,
  ) {}

  /** Who the call acts as, by its `Authorization` (a key's secret, or an su access token), in request `requestId`. */
  async actorFor(instanceId: string, authorization: string | undefined, requestId: string): Promise<Actor> {
    const credential = bearerCredential(authorization) ?? '';
    if (!isAccessToken(credential)) return actingInRequest({ key_id: await this.keyIdFor(instanceId, credential) }, requestId);
    const actor = await this.tokens.verify(authorization, instanceId);
    requireSu(actor);
    return auditActor({ ...actor, requestId });
  }

  async keyIdFor(instanceId: string, secret: string): Promise<string> {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance) throw instanceNotFound(instanceId);
    const offered = digest(secret);
    let matched: string | null = null;
    for (const [keyId, key] of instance.keys) {
      if (timingSafeEqual(offered, digest(key.export())) && matched === null) matched = keyId;
    }
    if (matched === null) throw incorrectKey();
    return matched;
  }
}
