import { DataKeySelector } from '../domain/personal-data';

export type { DataKeySelector };

/**
 * Data keys: the keys personal fields are sealed with in the event log, kept outside it so
 * that destroying a key makes what it sealed unreadable while the log itself stays append-only
 * (crypto-shredding). A store keeps of each key only what `DataKeyRing` gives it (a nonce the
 * key is derived from with the master key, or the key sealed under it), never the key itself.
 *
 * Ids are hierarchical (`<instance>/message/<room>/<id>/<version>`, `<instance>/user/<user>/<created_at>`),
 * so that one delete destroys exactly its subtree by prefix (a message's every version, a
 * whole instance's history).
 */
export interface StoredDataKey {
  readonly id: string;
  /** The user incarnation who wrote what the key seals (`<user_id>@<user_created_at>`), for an erasure; null when no user did. */
  readonly owner: string | null;
  /** What opens the key with the master key (opaque to the store). */
  readonly wrapped: string;
  /**
   * When the key counts as created (milliseconds since the epoch; default: now), which is what a
   * destroy's `createdUpTo` compares. The offline rewrite of a data directory into the sealed
   * form dates each key it makes at the event it seals, so the log's deletes reach it as they
   * would have reached a key made at the time.
   */
  readonly createdAt?: number;
}

export interface DataKeyStore {
  /**
   * Stores new keys durably, all of them in one durable write, before it resolves. An id that
   * is already stored keeps its first key (another process may have created it first): the
   * answer holds the wrapped key stored for every id given, which the caller must use.
   */
  create(keys: readonly StoredDataKey[]): Promise<Map<string, string>>;
  /** The wrapped keys stored for these ids; an id that was never created or was destroyed is absent. */
  getMany(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Destroys the keys selected, durably and for good (their bytes overwritten where the
   * store can), and answers how many it destroyed. Destroying what is absent is no error.
   */
  destroy(selector: DataKeySelector): Promise<number>;
  close(): Promise<void>;
}

export const DATA_KEY_STORE = Symbol('DataKeyStore');
