import { LRUCache } from 'lru-cache';
import { growingLru } from '../growing-lru';
import { DataKeySelector, DataKeyStore } from '../ports/data-key-store.port';
import { SecretBox } from './secret-box';
import { DerivedDataKeys } from './derived-data-keys';
import { KeyedTexts, KeyedTextsBounds } from './keyed-texts';

/** A data key wanted for sealing: its id, and the user incarnation who wrote what it seals. */
export interface DataKeyRequest {
  readonly id: string;
  readonly owner: string | null;
  /** When a key made for it counts as created (see StoredDataKey); default: now. */
  readonly createdAt?: number;
}

export interface DataKeyCacheSettings {
  /** How many data keys a process keeps in memory. */
  readonly size: number;
  /**
   * How long a key, or the knowledge that a key is gone, is trusted without asking the store:
   * the bound on how long a key destroyed by another process stays usable in this one.
   */
  readonly ttlMs: number;
  /**
   * Whether this process alone makes and destroys the store's keys (the embedded server: it
   * holds DATA_DIR's lock, and keys.sqlite lives there). Every destroy then passes through
   * this ring, which forgets the keys at once: a cached key is known to exist, so sealing asks
   * the store nothing and a cached key needs no time bound.
   */
  readonly exclusive?: boolean;
}

export const DEFAULT_DATA_KEY_CACHE: DataKeyCacheSettings = { size: 100_000, ttlMs: 60_000 };

interface CachedKey {
  /** Derived from `wrapped` at its first use: a block of keys made ready derives none at once. */
  key?: Buffer;
  /** As stored: a key of the same id made again after a destroy is another key. */
  readonly wrapped: string;
  readonly owner: string | null;
}

/**
 * The texts the ring's keys last sealed or opened that it keeps, to be read again without
 * deciphering (the live log, subscriptions and the next command read a send back at once): the
 * newest, bounded by count and by size. Kept with each cached key (DATA_KEY_CACHE_SIZE, 100,000
 * by default), they grew a busy server's heap with every send up to that count, and with the
 * texts' length (up to about 10 KB a long message's) without a bound in bytes.
 */
const OPENED_TEXTS: KeyedTextsBounds = { texts: 10_000, chars: 4 * 1024 * 1024 };

/**
 * How many texts handed over are kept unread, and how many characters: the sends in flight and
 * a second or so of a busy room's behind them. Past either, the oldest go first: their reader
 * opens them with their keys.
 */
const HANDED_TEXTS: KeyedTextsBounds = { texts: 4_096, chars: 4 * 1024 * 1024 };

/** Keys made ready that are cached per turn of the event loop (a block's thousand over several turns). */
const KEPT_PER_TURN = 500;

/** No key: destroyed, or never created (cached too, so that reading erased events asks the store once). */
const ABSENT = 'absent' as const;

/**
 * The process's data keys: made (DerivedDataKeys: the store keeps a random nonce, the key needs
 * the master key too) and stored before anything is sealed with them, recovered on use, kept in a bounded cache (lru-cache:
 * `size` keys, each for at most `ttlMs`). A destroy through this ring evicts at once; a
 * destroy by another process is seen here within `ttlMs`.
 */
export class DataKeyRing {
  private readonly cache: LRUCache<string, CachedKey | typeof ABSENT>;

  constructor(
    private readonly store: DataKeyStore,
    box: SecretBox,
    settings: DataKeyCacheSettings = DEFAULT_DATA_KEY_CACHE,
  ) {
    this.derived = new DerivedDataKeys(box);
    this.exclusive = settings.exclusive ?? false;
    this.cache = growingLru(settings.size, { ttl: settings.ttlMs, ttlAutopurge: false });
  }

  private readonly derived: DerivedDataKeys;
  private readonly exclusive: boolean;
  /** Counts destroys begun: keys read or made while one ran are asked for again. */
  private destroys = 0;
  private readonly destroyWatchers = new Set<(selector: DataKeySelector) => void>();
  private readonly sealWatchers = new Set<(id: string, ciphertext: string, plaintext: string) => void>();
  /**
   * Texts another thread of the process sealed (the embedded server's request thread, for its
   * projector thread), by key id: `known` answers each once without the key, which this ring
   * then never fetches, derives or deciphers with. Forgotten with their keys (`forgetDestroyed`).
   */
  private readonly handed = new KeyedTexts(HANDED_TEXTS);
  /** What cached keys last sealed or opened (OPENED_TEXTS), answered only while the key is cached. */
  private readonly opened = new KeyedTexts(OPENED_TEXTS);

  /**
   * The keys to seal with: existing ones as stored, missing ones created durably (one write for
   * all of them). Unless this process is the only one that destroys keys (`exclusive`), the
   * store is asked which exist, cached or not: sealing with a key another process destroyed
   * meanwhile (an instance wipe takes the keys made ready for sends) would make new content
   * unreadable at once. The cache spares recovering keys.
   */
  async keysFor(requests: readonly DataKeyRequest[]): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>();
    if (requests.length === 0) return keys;
    if (this.exclusive && this.allCached(requests, keys)) return keys;
    keys.clear();
    const byId = new Map(requests.map((r) => [r.id, r]));
    const destroysBefore = this.destroys;
    const unknown: string[] = [];
    const missing: DataKeyRequest[] = [];
    for (const request of byId.values()) {
      const cached = this.exclusive ? this.cache.get(request.id) : undefined;
      if (cached === undefined) unknown.push(request.id);
      else if (cached === ABSENT) missing.push(request);
      else keys.set(request.id, this.keyOf(request.id, cached));
    }
    const stored = unknown.length ? await this.store.getMany(unknown) : new Map<string, string>();
    for (const id of unknown) if (!stored.has(id)) missing.push(byId.get(id)!);
    // One draw of randomness for every new key.
    const made = missing.length ? this.derived.storedForms(missing.length) : [];
    const kept = missing.length ? await this.store.create(missing.map((r, i) => ({ id: r.id, owner: r.owner, wrapped: made[i], createdAt: r.createdAt }))) : new Map<string, string>();
    // A destroy that ran meanwhile may have taken what was read or made: never seal with it.
    if (this.destroys !== destroysBefore) return this.keysFor(requests);
    for (const [id, wrapped] of [...stored, ...kept]) {
      const cached = this.cache.get(id);
      if (cached && cached !== ABSENT && cached.wrapped === wrapped) {
        keys.set(id, this.keyOf(id, cached));
        continue;
      }
      // A key made here is derived as one another process stored first is recovered: from what is stored.
      const entry: CachedKey = { wrapped, owner: byId.get(id)!.owner };
      keys.set(id, this.keyOf(id, entry));
      this.keep(id, entry);
    }
    return keys;
  }

  /**
   * Makes keys ready for sealing later (a reserved block's thousand), in one durable write,
   * deriving none of them: each is derived at its first use, so making a block costs the event
   * loop no hashing. The store is not read first: an id it already holds keeps its key (the
   * store answers it). They are cached `KEPT_PER_TURN` a turn of the event loop; keys a destroy
   * may have taken meanwhile are not cached: their first use asks the store again.
   */
  async prepare(requests: readonly DataKeyRequest[]): Promise<void> {
    if (requests.length === 0) return;
    const destroysBefore = this.destroys;
    const made = this.derived.storedForms(requests.length);
    const kept = await this.store.create(requests.map((r, i) => ({ id: r.id, owner: r.owner, wrapped: made[i], createdAt: r.createdAt })));
    for (let from = 0; from < requests.length; from += KEPT_PER_TURN) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      if (this.destroys !== destroysBefore) return;
      for (const request of requests.slice(from, from + KEPT_PER_TURN)) {
        const wrapped = kept.get(request.id);
        if (wrapped === undefined) continue;
        const cached = this.cache.peek(request.id);
        if (cached && cached !== ABSENT && cached.wrapped === wrapped) continue;
        this.keep(request.id, { wrapped, owner: request.owner });
      }
    }
  }

  /** The keys that exist among `ids` (a destroyed one is absent). */
  async existing(ids: Iterable<string>): Promise<Map<string, Buffer>> {
    const keys = new Map<string, Buffer>();
    const unknown: string[] = [];
    const wanted = [...new Set(ids)];
    for (const id of wanted) {
      const cached = this.cache.get(id);
      if (cached === undefined) unknown.push(id);
      else if (cached !== ABSENT) keys.set(id, this.keyOf(id, cached));
    }
    if (unknown.length === 0) return keys;
    const destroysBefore = this.destroys;
    const stored = await this.store.getMany(unknown);
    // What a destroy that ran meanwhile took must not be kept.
    if (this.destroys !== destroysBefore) return this.existing(wanted);
    for (const id of unknown) {
      const wrapped = stored.get(id);
      if (wrapped === undefined) {
        this.cache.set(id, ABSENT);
        continue;
      }
      const entry: CachedKey = { wrapped, owner: null };
      keys.set(id, this.keyOf(id, entry));
      this.keep(id, entry);
    }
    return keys;
  }

  /**
   * What the cache knows of a sealed text without asking the store, in one look: its plaintext
   * (a string) when this process sealed or opened it last, else its key (to decipher it with),
   * null when the key is known to be gone, undefined when the store must be asked (`existing`).
   * Lets a reader open an event whose key is cached in the same turn it reads it.
   */
  known(id: string, ciphertext: string): string | Buffer | null | undefined {
    // Once (a projector reads each event once); a read again asks the cache and the store.
    const handed = this.handed.take(id, ciphertext);
    if (handed !== undefined) return handed;
    const cached = this.cache.get(id);
    if (cached === undefined) return undefined;
    if (cached === ABSENT) return null;
    return this.opened.get(id, ciphertext) ?? this.keyOf(id, cached);
  }

  /** Remembers what a cached key sealed or opened (one text per key: a message version's; the newest OPENED_TEXTS). */
  remember(id: string, ciphertext: string, plaintext: string): void {
    const cached = this.cache.peek(id);
    if (cached && cached !== ABSENT) this.opened.add(id, ciphertext, plaintext);
  }

  /** Remembers what a key has just sealed (`remember`), and tells `watchSealed`'s watchers. */
  sealed(id: string, ciphertext: string, plaintext: string): void {
    for (const watcher of this.sealWatchers) watcher(id, ciphertext, plaintext);
    this.remember(id, ciphertext, plaintext);
  }

  /**
   * Told of each text this ring seals (`sealed`; not of those it opens, which were folded
   * already): the embedded server's request thread hands its projector thread the plaintexts of
   * what it appends, which that thread's ring then answers without a key (`rememberHanded`).
   */
  watchSealed(watcher: (id: string, ciphertext: string, plaintext: string) => void): () => void {
    this.sealWatchers.add(watcher);
    return () => this.sealWatchers.delete(watcher);
  }

  /**
   * What another thread sealed under key `id` (its ciphertext and plaintext), for `known` to
   * answer once without the key. That thread hands it over before it tells of any destroy that
   * takes the key: `forgetDestroyed` drops it then.
   */
  rememberHanded(id: string, ciphertext: string, plaintext: string): void {
    this.handed.add(id, ciphertext, plaintext);
  }

  /**
   * Destroys keys for good, and forgets them in this process first: even when the store fails
   * (the sweep destroys them later), this process neither shows nor seals with them again.
   */
  async destroy(selector: DataKeySelector): Promise<number> {
    this.forgetDestroyed(selector);
    for (const watcher of this.destroyWatchers) watcher(selector);
    return this.store.destroy(selector);
  }

  /**
   * Told of each destroy through this ring, before the store is asked to destroy: a reader of
   * the same store on another thread (the embedded server's projector thread) forgets the keys
   * as soon as it reads the word (`forgetDestroyed`), not `ttlMs` later.
   */
  watchDestroys(watcher: (selector: DataKeySelector) => void): () => void {
    this.destroyWatchers.add(watcher);
    return () => this.destroyWatchers.delete(watcher);
  }

  /** Keys another ring of the same store is destroying: never opened here again (a read in flight asks the store again). */
  forgetDestroyed(selector: DataKeySelector): void {
    this.destroys++;
    this.forget(selector);
  }

  /** Every requested key when all are cached (into `keys`); false as soon as one is not. */
  private allCached(requests: readonly DataKeyRequest[], keys: Map<string, Buffer>): boolean {
    for (const request of requests) {
      const cached = this.cache.get(request.id);
      if (cached === undefined || cached === ABSENT) return false;
      keys.set(request.id, this.keyOf(request.id, cached));
    }
    return true;
  }

  private keyOf(id: string, entry: CachedKey): Buffer {
    return (entry.key ??= this.derived.recover(id, entry.wrapped));
  }

  /**
   * A key that exists, kept until evicted by the size bound when this process alone destroys
   * keys, otherwise for the TTL. Absence keeps the TTL always: a key another process makes
   * (an import beside the server) is seen within it.
   */
  private keep(id: string, entry: CachedKey): void {
    // A text remembered under the id belongs to the key cached before (perhaps destroyed since and
    // made again elsewhere): it is answered only with the key that sealed or opened it.
    this.opened.forget({ ids: [id] });
    this.cache.set(id, entry, this.exclusive ? { ttl: 0 } : undefined);
  }

  private forget(selector: DataKeySelector): void {
    this.handed.forget(selector);
    this.opened.forget(selector);
    if ('ids' in selector) {
      // By id: no scan of the cache (a Beams delivery destroys one key, many times a second).
      for (const id of selector.ids) this.cache.delete(id);
      return;
    }
    const gone =
      'prefix' in selector
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
  }
}
