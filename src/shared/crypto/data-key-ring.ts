import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { DataKeySelector, DataKeyStore } from '../ports/data-key-store.port';
import { SealedSecret, SecretBox } from './secret-box';

/** A data key wanted for sealing: its id, and the user incarnation who wrote what it seals. */
export interface DataKeyRequest {
  readonly id: string;
  readonly owner: string | null;
}

export interface DataKeyCacheSettings {
  /** How many data keys a process keeps unwrapped in memory. */
  readonly size: number;
  /**
   * How long a key, or the knowledge that a key is gone, is trusted without asking the store:
   * the bound on how long a key destroyed by another process stays usable in this one.
   */
  readonly ttlMs: number;
}

export const DEFAULT_DATA_KEY_CACHE: DataKeyCacheSettings = { size: 100_000, ttlMs: 60_000 };

interface CachedKey {
  readonly key: Buffer;
  /** As stored: a key of the same id made again after a destroy is another key. */
  readonly wrapped: string;
  /** What this key last sealed or opened (its ciphertext and plaintext): read again without deciphering, forgotten with the key. */
  opened?: { readonly ciphertext: string; readonly plaintext: string };
  readonly owner: string | null;
}

/** No key: destroyed, or never created (cached too, so that reading erased events asks the store once). */
const ABSENT = 'absent' as const;

/**
 * The process's data keys: created (random 32 bytes, wrapped under the master key) and stored
 * before anything is sealed with them, unwrapped on use, kept in a bounded cache (lru-cache:
 * `size` keys, each for at most `ttlMs`). A destroy through this ring evicts at once; a
 * destroy by another process is seen here within `ttlMs`.
 */
export class DataKeyRing {
  private readonly cache: LRUCache<string, CachedKey | typeof ABSENT>;

  constructor(
    private readonly store: DataKeyStore,
    private readonly box: SecretBox,
    settings: DataKeyCacheSettings = DEFAULT_DATA_KEY_CACHE,
  ) {
    this.cache = new LRUCache({ max: settings.size, ttl: settings.ttlMs, ttlAutopurge: false });
  }

  /**
   * The keys to seal with: existing ones as stored, missing ones created durably (one write for
   * all of them). The store is always asked which exist, cached or not: sealing with a key
   * another process destroyed meanwhile (an instance wipe takes the keys made ready for sends)
   * would make new content unreadable at once. The cache spares unwrapping.
   */
  async keysFor(requests: readonly DataKeyRequest[]): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>();
    const byId = new Map(requests.map((r) => [r.id, r]));
    if (byId.size === 0) return keys;
    const stored = await this.store.getMany([...byId.keys()]);
    const created = [...byId.values()].filter((r) => !stored.has(r.id));
    // One draw of randomness for every new key (a block makes a thousand).
    const material = created.length ? randomBytes(32 * created.length) : Buffer.alloc(0);
    const fresh = new Map(created.map((r, i) => [r.id, material.subarray(32 * i, 32 * (i + 1))]));
    const kept = created.length ? await this.store.create(created.map((r) => ({ id: r.id, owner: r.owner, wrapped: this.wrap(fresh.get(r.id)!) }))) : new Map<string, string>();
    for (const [id, wrapped] of [...stored, ...kept]) {
      const cached = this.cache.get(id);
      if (cached && cached !== ABSENT && cached.wrapped === wrapped) {
        keys.set(id, cached.key);
        continue;
      }
      const key = this.unwrap(wrapped);
      keys.set(id, key);
      this.cache.set(id, { key, wrapped, owner: byId.get(id)!.owner });
    }
    return keys;
  }

  /** The keys that exist among `ids` (a destroyed one is absent). */
  async existing(ids: Iterable<string>): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>();
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      const cached = this.cache.get(id);
      if (cached === undefined) unknown.push(id);
      else if (cached !== ABSENT) keys.set(id, cached.key);
    }
    if (unknown.length === 0) return keys;
    const stored = await this.store.getMany(unknown);
    for (const id of unknown) {
      const wrapped = stored.get(id);
      if (wrapped === undefined) {
        this.cache.set(id, ABSENT);
        continue;
      }
      const key = this.unwrap(wrapped);
      keys.set(id, key);
      this.cache.set(id, { key, wrapped, owner: null });
    }
    return keys;
  }

  /** The plaintext of `ciphertext` sealed under `id`, when this process sealed or opened it last and the key is still known. */
  plaintextOf(id: string, ciphertext: string): string | undefined {
    const cached = this.cache.peek(id);
    return cached && cached !== ABSENT && cached.opened?.ciphertext === ciphertext ? cached.opened.plaintext : undefined;
  }

  /** Remembers what a key sealed, with the key (one text per key: a message version's). */
  remember(id: string, ciphertext: string, plaintext: string): void {
    const cached = this.cache.peek(id);
    if (cached && cached !== ABSENT) cached.opened = { ciphertext, plaintext };
  }

  /** Destroys keys for good, and forgets them in this process at once. */
  async destroy(selector: DataKeySelector): Promise<number> {
    const destroyed = await this.store.destroy(selector);
    const gone =
      'ids' in selector
        ? (id: string) => selector.ids.includes(id)
        : 'prefix' in selector
          ? (id: string) => id.startsWith(selector.prefix)
          : 'prefixes' in selector
            ? (id: string) => selector.prefixes.some((prefix) => id.startsWith(prefix))
          : (_id: string, entry: CachedKey | typeof ABSENT) => entry !== ABSENT && entry.owner === selector.owner;
    const evicted: string[] = [];
    for (const [id, entry] of this.cache.entries()) {
      // An owner's keys read back from the store are cached without their owner: those are forgotten too.
      if (gone(id, entry) || ('owner' in selector && entry !== ABSENT && entry.owner === null)) evicted.push(id);
    }
    for (const id of evicted) this.cache.delete(id);
    return destroyed;
  }

  private wrap(key: Buffer): string {
    return JSON.stringify(this.box.seal(key.toString('base64')));
  }

  private unwrap(wrapped: string): Buffer {
    return Buffer.from(this.box.open(JSON.parse(wrapped) as SealedSecret), 'base64');
  }
}
