import { createHmac, randomBytes } from 'node:crypto';
import { SealedSecret, SecretBox } from './secret-box';

/** How the stored form of a derived key begins (a sealed one is JSON, `{`). */
const DERIVED = 'd1.';
const NONCE_BYTES = 32;

/** A data key as made: the key, and what the store keeps of it. */
export interface MadeDataKey {
  readonly key: Buffer;
  readonly stored: string;
}

/**
 * Data keys derived from the master key, so that making a block of a thousand costs one draw
 * of randomness and a hash each, with no cipher: a key is HMAC-SHA256, under a secret derived
 * from the master key (HKDF), of a random 32-byte nonce and the key's id. The store keeps only
 * the nonce: without it (destroyed) the key cannot be made again, and without the master key a
 * copy of the store opens nothing. The id is bound in, so a nonce moved onto another id makes
 * another key. Keys stored sealed under the master key (the first form) still open.
 */
export class DerivedDataKeys {
  private readonly secret: Buffer;

  constructor(private readonly box: SecretBox) {
    this.secret = box.deriveKey('data-keys');
  }

  /** New keys for `ids`, in order. */
  make(ids: readonly string[]): MadeDataKey[] {
    const nonces = randomBytes(NONCE_BYTES * ids.length);
    return ids.map((id, i) => {
      const nonce = nonces.subarray(NONCE_BYTES * i, NONCE_BYTES * (i + 1));
      return { key: this.derive(id, nonce), stored: DERIVED + nonce.toString('base64') };
    });
  }

  /** The key of `id` from what the store keeps of it. */
  recover(id: string, stored: string): Buffer {
    if (stored.startsWith(DERIVED)) return this.derive(id, Buffer.from(stored.slice(DERIVED.length), 'base64'));
    return Buffer.from(this.box.open(JSON.parse(stored) as SealedSecret), 'base64');
  }

  private derive(id: string, nonce: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(nonce).update(id, 'utf8').digest();
  }
}
