import { Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError, notFound } from '../../shared/domain/errors';
import { KeyRing } from '../instances/authentication/key-ring';

const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest();

export const incorrectKey = () => new DomainError('unauthorized', 'incorrect_key', 'The secret key is incorrect for this instance');
export const instanceNotFound = (id: string) => notFound('instance_not_found', `There is no instance "${id}"`);

/**
 * Beams server SDK calls carry the raw secret of an instance key (`Authorization: Bearer
 * <secret>`), not a JWT. It is compared with every enabled key's secret in constant time:
 * both sides are hashed first (so lengths leak nothing) and every key is compared, a match
 * or not. Answers the id of the key that matched, for the audit trail; never the secret.
 */
@Injectable()
export class SecretKeyCheck {
  constructor(private readonly keyRing: KeyRing) {}

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
