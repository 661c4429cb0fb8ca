import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, ParleyConfig } from '../../config/config';
import { keySecretShortfall } from '../../shared/crypto/key-secret';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { INSTANCES, InstanceDocument } from '../../../projections/instances/instances.projection';
import { KeyRing } from './authentication/key-ring';

const tokenProviderOn = (instanceId: string) =>
  `The test token provider is enabled for the instance "${instanceId}": anyone who reaches this server gets a token for any ` +
  `user id of it (POST /services/chatkit_token_provider/v1/${instanceId}/token). Keep it to development; switch it off with ` +
  `npm run admin -- token-provider:disable ${instanceId}`;

const shortSecret = (instanceId: string, keyId: string, why: string) =>
  `The key "${keyId}" of the instance "${instanceId}" is still honoured, but ${why.replace(/^a key secret/, 'its secret')}. ` +
  `Create a new key (npm run admin -- key:create ${instanceId}), move your servers to it, then npm run admin -- key:disable ${instanceId} ${keyId}`;

/**
 * What an operator must hear when a server starts: instances whose test token provider is on,
 * and active keys whose secrets are too short to be secret (created before such secrets were
 * refused: they keep working, so that an upgrade locks no one out, until replaced).
 */
@Injectable()
export class CredentialWarnings {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly keyRing: KeyRing,
    @Inject(CONFIG) private readonly config: ParleyConfig,
  ) {}

  async atStart(): Promise<string[]> {
    const instances = await this.readModels.find<InstanceDocument>(INSTANCES, { sort: [{ field: 'id' }] });
    const warnings: string[] = [];
    const providerOn = new Set(instances.filter((i) => !i.disabled && i.token_provider_enabled).map((i) => i.id));
    // Separate projector workers may not have folded this start's bootstrap yet.
    const bootstrap = this.config.bootstrap;
    if (bootstrap?.tokenProviderEnabled) providerOn.add(bootstrap.instanceId);
    for (const id of [...providerOn].sort()) warnings.push(tokenProviderOn(id));
    for (const { id } of instances) {
      for (const [keyId, key] of (await this.keyRing.instance(id))?.keys ?? []) {
        const why = keySecretShortfall(key.symmetricKeySize ?? 0);
        if (why) warnings.push(shortSecret(id, keyId, why));
      }
    }
    return warnings;
  }
}
