import { hash, randomBytes } from 'node:crypto';
import { SealedSecret, SecretBox } from './secret-box';

/** How the stored form of a derived key begins (a sealed one is JSON, `{`). */
const DERIVED = 'd1.';
const NONCE_BYTES = 32;
/** SHA-256's block: HMAC pads its key to it. */
const BLOCK_BYTES = 64;

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
  /** The secret XORed with HMAC's inner and outer pads, computed once. */
  private readonly innerPad: Buffer;
  private readonly outerPad: Buffer;

  constructor(private readonly box: SecretBox) {
    const secret = box.deriveKey('data-keys');
    this.innerPad = Buffer.alloc(BLOCK_BYTES, 0x36);
    this.outerPad = Buffer.alloc(BLOCK_BYTES, 0x5c);
    for (let i = 0; i < secret.length; i++) {
      this.innerPad[i] ^= secret[i];
      this.outerPad[i] ^= secret[i];
    }
  }

  /** New keys for `ids`, in order. */
  make(ids: readonly string[]): MadeDataKey[] {
    return this.storedForms(ids.length).map((stored, i) => ({ key: this.recover(ids[i], stored), stored }));
  }

  /**
   * What the store keeps of `count` new keys (fresh nonces), without the keys: each is derived
   * by `recover` when first used, so a block of a thousand made ready costs no hashing at once.
   */
  storedForms(count: number): string[] {
    const nonces = randomBytes(NONCE_BYTES * count);
    return Array.from({ length: count }, (_, i) => DERIVED + nonces.toString('base64', NONCE_BYTES * i, NONCE_BYTES * (i + 1)));
  }

  /** The key of `id` from what the store keeps of it. */
  recover(id: string, stored: string): Buffer {
    if (stored.startsWith(DERIVED)) return this.derive(id, Buffer.from(stored.slice(DERIVED.length), 'base64'));
    return Buffer.from(this.box.open(JSON.parse(stored) as SealedSecret), 'base64');
  }

  /**
   * HMAC-SHA256(secret, nonce ‖ id), computed as RFC 2104 writes it with two one-shot hashes
   * (the same bytes as `createHmac`, at a fraction of its per-call cost).
   */
  private derive(id: string, nonce: Buffer): Buffer {
    const inner = hash('sha256', Buffer.concat([this.innerPad, nonce, Buffer.from(id, 'utf8')]), 'buffer');
    return hash('sha256', Buffer.concat([this.outerPad, inner]), 'buffer');
  }
}
