import { Inject, Injectable } from '@nestjs/common';
import { createSecretKey, KeyObject } from 'node:crypto';
import { SECRET_BOX, SecretBox, SealedSecret } from '../../../shared/crypto/secret-box';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { INSTANCES, InstanceDocument, instanceDocumentId } from '../../../../projections/instances/instances.projection';

export interface ActiveInstance {
  readonly id: string;
  readonly tokenProviderEnabled: boolean;
  /**
   * key id → the key's secret, for active keys only, as a secret KeyObject: given a plain
   * string, jsonwebtoken first tries (and fails) to parse it as a public key on every call.
   */
  readonly keys: ReadonlyMap<string, KeyObject>;
}

/** Seconds a disabled key or instance may still be honoured by another process. */
const TTL_MS = 2_000;

/**
 * The active instances and their opened key secrets, read from the instances read model and
 * kept in memory for a moment: verifying every request must not cost a store read and a
 * decryption. A change made through this process is seen at once (`forget`).
 */
@Injectable()
export class KeyRing {
  private readonly cache = new Map<string, { at: number; instance: ActiveInstance | null }>();
  /** Opened secrets by their sealed form: a refresh keeps the same KeyObject for an unchanged key. */
  private readonly opened = new Map<string, KeyObject>();

  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async instance(instanceId: string): Promise<ActiveInstance | null> {
    const hit = this.cache.get(instanceId);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.instance;
    const doc = await this.readModels.get<InstanceDocument>(INSTANCES, instanceDocumentId(instanceId));
    const instance: ActiveInstance | null =
      doc && !doc.disabled
        ? {
            id: doc.id,
            tokenProviderEnabled: doc.token_provider_enabled,
            keys: new Map(
              doc.keys
                .filter((k) => !k.disabled)
                .map((k) => [k.key_id, this.open(k.secret)]),
            ),
          }
        : null;
    this.cache.set(instanceId, { at: Date.now(), instance });
    return instance;
  }

  private open(sealed: SealedSecret): KeyObject {
    let key = this.opened.get(sealed.ciphertext);
    if (!key) {
      key = createSecretKey(Buffer.from(this.box.open(sealed), 'utf8'));
      this.opened.set(sealed.ciphertext, key);
    }
    return key;
  }

  forget(instanceId: string): void {
    this.cache.delete(instanceId);
  }
}
