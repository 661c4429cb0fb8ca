import { LogPosition } from '../domain/event';

/** A read-model document: plain JSON. `_id` is its key within its collection. */
export type Document = { readonly _id: string; readonly [field: string]: unknown };

export interface IndexSpec {
  /** Fields in order; each optionally descending. */
  readonly fields: readonly (string | { readonly field: string; readonly descending: true })[];
  readonly unique?: boolean;
}

/**
 * A collection searched by its text (`searchText`). Its documents hold, in `field`, the text as
 * words separated by spaces (already folded and split: the store only splits on spaces and
 * punctuation), in `facets` an array of tokens of letters and digits a search may require, and
 * in `order` a whole number unique in the collection that never changes for a document (larger:
 * newer), by which searches page.
 */
export interface TextIndexSpec {
  readonly field: string;
  readonly facets: string;
  readonly order: string;
  /**
   * How the documents' facets are made of their other fields, if they are (in this order): a
   * store may then keep those fields alone and make the facets from them (SQLite does, for a
   * collection kept in columns: in SQL, when it indexes and reads them), so a document's facets
   * must be exactly these.
   */
  readonly facetsFrom?: readonly FacetSource[];
}

/**
 * One facet of a document: `prefix` and the hexadecimal of the UTF-8 of `fields`' values joined
 * by NUL characters (`facetToken`); or `token` when the boolean field `when` is true. Prefixes and
 * tokens are letters and digits.
 */
export type FacetSource = { readonly prefix: string; readonly fields: readonly string[] } | { readonly token: string; readonly when: string };

/** A facet made of values as `FacetSource` says. */
export const facetToken = (prefix: string, ...values: readonly string[]): string => prefix + Buffer.from(values.join('\u0000'), 'utf8').toString('hex');

export interface CollectionSpec {
  readonly name: string;
  readonly indexes?: readonly IndexSpec[];
  /**
   * For a collection whose documents all have one shape: every field besides `_id`, in the
   * order the projection writes them, each a string or a number (or absent), or, declared with
   * its type, a boolean or any JSON value (an array of parts). A store may keep them as columns
   * rather than as a document (SQLite does: no field names repeated in every row, nothing to
   * encode, parse or index through JSON, which a rebuild of a large collection pays per row);
   * documents read back the same, field for field. Writing any other field or value into it fails.
   */
  readonly columns?: readonly (string | TypedColumn)[];
  /**
   * For a collection kept in `columns` whose documents' `_id` is `documentId` of some of their
   * fields (each as a string: a number in decimal): those fields, in order. A store may key its
   * rows by them rather than keep the id a second time (SQLite does: no id column, the rows
   * unique by those fields instead, whose index serves for an index of its first fields);
   * documents read back the same. Writing a document whose `_id` is not made of them fails.
   */
  readonly key?: readonly string[];
  readonly text?: TextIndexSpec;
  /**
   * A collection of `LogPointer`s (the audit index): a store may keep them in a layout of its own
   * (SQLite: the names as numbers, keyed by name and position, no id or index besides). Queries
   * of it address `instance_id`, `key`, `position`, `stream`, `revision` and `type`, not `_id`.
   */
  readonly logPointers?: true;
}

/**
 * One line pointing at a log event under a name (`key`) of an instance, and nothing else: its
 * `_id` is `logPointerId(instance_id, key, position)`, and the position it reflects its own.
 */
export interface LogPointer extends Document {
  readonly instance_id: string;
  readonly key: string;
  readonly position: LogPosition;
  readonly stream: string;
  readonly revision: number;
  readonly type: string;
}

/** A `LogPointer`'s id: its instance, key and position, which a store keeping pointers by name and position reads back from it. */
export const logPointerId = (instanceId: string, key: string, position: LogPosition): string => JSON.stringify([instanceId, key, position]);

/**
 * A column of a collection kept in columns holding other values than strings and numbers:
 * `integer`, a whole number (a key's number must be declared so, to be read out of an `_id`);
 * `time`, a time as the string `Date.prototype.toISOString` writes (any other string is kept as it
 * is), which a store may keep as a number (SQLite: milliseconds), read back and compared as the string.
 */
export interface TypedColumn {
  readonly name: string;
  readonly type: 'boolean' | 'json' | 'integer' | 'time';
}

/**
 * A search of a text-indexed collection. A document matches when its text holds every phrase
 * (words in a row), its facets hold one of each group's tokens, and `where` holds. `newest`
 * answers by `order`, largest first; `relevance` ranks the newest `window` matches, best first
 * (SQLite: BM25's weighting of how often each phrase occurs for the text's length; MongoDB: its
 * text score): a word found in most of a large history costs a bounded search, not a ranking of
 * the whole history.
 */
export interface TextSearch {
  /** The collection's text index, as declared. */
  readonly index: TextIndexSpec;
  readonly phrases: readonly (readonly string[])[];
  readonly facets: readonly (readonly string[])[];
  readonly where?: Query['where'];
  readonly order: 'newest' | 'relevance';
  /** `newest`: documents of a smaller `order`. `relevance`: of a lower score, or the same score and a smaller `order`. */
  readonly after?: { readonly order: number; readonly score?: number };
  readonly window: number;
  readonly limit: number;
}

/** A document a search found, with its `order` and (for `relevance`; 0 otherwise) its score, higher is better. */
export interface TextMatch<D extends Document = Document> {
  readonly document: D;
  readonly order: number;
  readonly score: number;
}

export type Scalar = string | number | boolean | null;

export type Condition =
  | Scalar
  | { readonly gt?: Scalar; readonly gte?: Scalar; readonly lt?: Scalar; readonly lte?: Scalar }
  | { readonly in: readonly Scalar[] };

export interface Query {
  /** Fields compared as a whole; conditions are ANDed. Nested fields are not addressed. */
  readonly where?: Readonly<Record<string, Condition>>;
  readonly sort?: readonly { readonly field: string; readonly descending?: boolean }[];
  readonly limit?: number;
}

/** One write in a projection batch: a whole document (with the position it reflects) or a removal. */
export type DocumentChange =
  | { readonly collection: string; readonly kind: 'put'; readonly document: Document; readonly position: LogPosition }
  | { readonly collection: string; readonly kind: 'delete'; readonly id: string };

export interface StoredDocument<D extends Document = Document> {
  readonly document: D;
  /** The log position of the last event folded into this document. */
  readonly position: LogPosition;
}

/**
 * The most one `applyBatch` should carry (MongoDB: what one transaction holds well within its
 * time limit and the server's cache). A projector flushes a larger batch in several writes.
 */
export interface BatchLimit {
  /** Document changes. */
  readonly changes: number;
  /** About this many bytes of documents (their JSON length). */
  readonly bytes: number;
}

export interface ReadModelStore {
  /** How much one `applyBatch` should carry; absent: any batch fits in one write (SQLite). */
  readonly batchLimit?: BatchLimit;
  /**
   * Creates collections and their indexes if absent; idempotent. A store may defer the
   * secondary indexes of a collection it creates empty until `buildDeferredIndexes` (a
   * rebuild fills it faster without them); queries answer the same either way.
   */
  ensureCollections(specs: readonly CollectionSpec[]): Promise<void>;
  /** Builds the indexes `ensureCollections` deferred on these collections (none: nothing to do); idempotent. */
  buildDeferredIndexes(collections: readonly string[]): Promise<void>;
  get<D extends Document = Document>(collection: string, id: string): Promise<D | null>;
  getMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<D[]>;
  getStored<D extends Document = Document>(collection: string, id: string): Promise<StoredDocument<D> | null>;
  /** `getStored` for many ids in one round trip (a projector's batch): the ones that exist, in any order. */
  getStoredMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<StoredDocument<D>[]>;
  find<D extends Document = Document>(collection: string, query?: Query): Promise<D[]>;
  /** How many documents match `where` (sort and limit do not apply). */
  count(collection: string, where?: Query['where']): Promise<number>;
  /** The documents of a text-indexed collection (`CollectionSpec.text`) a search finds, at most `limit`. */
  searchText<D extends Document = Document>(collection: string, search: TextSearch): Promise<TextMatch<D>[]>;
  /** Every stored document matching the query, with positions: what projectors fold into. */
  findStored<D extends Document = Document>(collection: string, query?: Query): Promise<StoredDocument<D>[]>;
  /**
   * Applies the changes and moves each named checkpoint, all or nothing: a crash leaves
   * either the whole batch and its checkpoints, or neither. A change that cannot be applied
   * rejects the whole batch with a ReadModelWriteError.
   *
   * Guards, in the store's own update filter (not only in the caller's memory):
   * - a `put` replaces a stored document only when its position is later than the stored one
   *   (an older or equal one is skipped, not an error: redelivery is normal);
   * - a checkpoint only moves forward (an older position leaves it as it is);
   * - with `fences`, the whole batch is written only while each named lease is held by its
   *   owner and not expired; otherwise it rejects with LeaseLostError naming a lost lease and
   *   writes nothing. All of a batch's fences are checked in one statement.
   *
   * A batch the store cannot hold in one transaction rejects with BatchTooLargeError: nothing
   * is written, and the same changes split in smaller batches will do.
   */
  applyBatch(
    changes: readonly DocumentChange[],
    checkpoints: Readonly<Record<string, LogPosition>>,
    fences?: readonly LeaseFence[],
  ): Promise<void>;
  getCheckpoint(projection: string): Promise<LogPosition | null>;
  /** The checkpoints of these projections in one query; one never moved (or reset) is absent. */
  getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>>;
  /** Removes collections and the named checkpoints (a rebuild starts from nothing). */
  reset(collections: readonly string[], projections: readonly string[]): Promise<void>;
  /**
   * Takes or renews a lease so that one worker runs a projection; true when `owner` holds it
   * until now + ttl. A lease that ran out may be taken by anyone. A write that returns only
   * after the expiry it wrote (it waited behind a long transaction) is written again, so a
   * renewal never leaves the lease already expired.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  /**
   * The stored leases among `names`, in one round trip, expired ones included (their expiry
   * says how long ago their holder stopped renewing); a released or never taken lease is absent.
   */
  leases(names: readonly string[]): Promise<Map<string, StoredLease>>;
  /**
   * Removes what deleted or replaced documents left behind in the store's files (SQLite: with
   * `secure_delete` on, their pages are zeroed; this empties the WAL, which still holds the
   * older page images). Absent where the store has no such leftovers to reach (MongoDB: see
   * docs/privacy.md). Called after a batch that folded an event destroying content.
   */
  overwriteFreedSpace?(): Promise<void>;
  close(): Promise<void>;
}

/** A lease as stored: who took or last renewed it, and until when (ms since the epoch). */
export interface StoredLease {
  readonly owner: string;
  readonly expiresAtMs: number;
}

/** A lease a batch may only be written under (see `applyBatch`). */
export interface LeaseFence {
  readonly name: string;
  readonly owner: string;
}

/** The batch was refused because its writer no longer holds a lease it named: nothing was written. */
export class LeaseLostError extends Error {
  constructor(readonly lease: string, readonly owner: string) {
    super(`The lease ${lease} is no longer held by ${owner}`);
    this.name = 'LeaseLostError';
  }
}

/** What `applyBatch` rejects with when a change cannot be applied (a unique index, an undeclared collection). */
export class ReadModelWriteError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReadModelWriteError';
  }
}

/** The store cannot hold the batch in one transaction: nothing was written; split it and write the parts. */
export class BatchTooLargeError extends ReadModelWriteError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BatchTooLargeError';
  }
}

export const READ_MODEL_STORE = Symbol('ReadModelStore');
