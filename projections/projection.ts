/**
 * A projection is pure: it names the events it folds, the documents each event touches and
 * how a document changes. The runner (src/shared/application/projection-runtime/projector-runner.ts) owns all I/O:
 * batching, the position guard on every document, checkpoints and the lease.
 *
 * Only type imports from src/shared: no framework, driver or store reaches this folder.
 */
import type { DomainEvent, RecordedEvent } from '../src/shared/domain/event';
import type { CollectionSpec, Condition, Document, Query } from '../src/shared/ports/read-model-store.port';

export type { Document };

/** One document by key; `evolve` receives null when it does not exist yet. */
export interface DocumentRef {
  readonly collection: string;
  readonly id: string;
  /** What `evolve` must read besides the document (rare events only: see DocumentRead). */
  readonly reads?: readonly DocumentRead[];
}

/** Every existing document matching `where` (e.g. all memberships of a deleted user). */
export interface DocumentSelection {
  readonly collection: string;
  readonly where: Readonly<Record<string, Condition>>;
  /** Read once for the selection, handed to `evolve` for each document it selects. */
  readonly reads?: readonly DocumentRead[];
}

/**
 * Other documents of the projection's own collections that `evolve` needs to fold a target (a
 * thread's newest remaining reply once its last one is deleted), read after everything the
 * batch folded before it (this event's earlier targets included) is written. Bounded by
 * `limit`: a fold never reads what grows with a room's history. Each is a write of the batch
 * so far and a query, so only rare events (deletions) should ask.
 */
export interface DocumentRead {
  readonly collection: string;
  readonly where: Readonly<Record<string, Condition>>;
  readonly sort?: Query['sort'];
  readonly limit: number;
}

export type Target = DocumentRef | DocumentSelection;

export const isRef = (t: Target): t is DocumentRef => 'id' in t;

/** The type names of the events `E` (spelled so that a union of a generic `E` and another event works too). */
export type TypeOf<E extends DomainEvent> = E extends DomainEvent ? E['type'] : never;

/**
 * A projection over the events `E` it folds (the union the write side declares, as in
 * `ProjectionDefinition<MessageEvent | RoomDeleted, MessageDocument>`) into documents `D`.
 * `targets` and `evolve` are methods, so a definition of any `E` and `D` is held as a
 * `ProjectionDefinition` by the runner, which hands it only events of a type it `handles`
 * and only documents of its own collections.
 */
export interface ProjectionDefinition<E extends DomainEvent = DomainEvent, D extends Document = Document> {
  /** Stable name: the checkpoint and the lease are kept under it. Bump `version` to rebuild into new collections. */
  readonly name: string;
  readonly version: number;
  readonly collections: readonly CollectionSpec[];
  readonly handles: readonly TypeOf<E>[];
  /**
   * Every reader of it waits for it to reach the log's head first (the audit index): a write
   * then never waits for it, so its lag or its failure holds no write's answer up.
   */
  readonly awaitedByReaders?: true;
  /**
   * Folded behind the others, for an index no write waits for (message search, the audit
   * index): its own runner writes large batches a short while after the events
   * (BACKGROUND_FOLD in src/app/projectors.ts), so the batches the writes wait for are not
   * held up by its writes. With `sqliteFile` (an index whose writes cost far more than the
   * events it folds: message search), on SQLite its collections, checkpoint and lease live in a
   * file of their own in DATA_DIR (`<sqliteFile>.sqlite`), with its own write lock; without,
   * in the main file. Readers wait for it (`awaitedByReaders`).
   */
  readonly background?: { readonly sqliteFile?: string };
  /**
   * The events after which its documents no longer hold content they held (a deletion, an
   * edit, a wipe): once a batch with one is written, the runner has the store overwrite what
   * the old documents left in its files (`ReadModelStore.overwriteFreedSpace`).
   */
  readonly destroys?: readonly TypeOf<E>[];
  /**
   * How its work may be split across projector workers (PROJECTOR_PARTITIONS): absent, one
   * worker folds it all. See projections/partitioning.ts.
   */
  readonly partitioning?: Partitioning;
  targets(event: RecordedEvent<E>): readonly Target[];
  /**
   * The new document, or null to remove it. Must not mutate `document`. `read` holds what the
   * target's `reads` found, one list per read, in their order (absent when it asks none).
   */
  evolve(document: D | null, event: RecordedEvent<E>, target: DocumentRef, read?: readonly (readonly Document[])[]): D | null;
}

/**
 * What splits a projection's work into partitions, each folded under its own lease and
 * checkpoint: every document belongs to one partition (its key), and so does every event
 * that names it. An event of no partition (a user's deletion in a projection split by room)
 * is folded by every partition, each onto its own documents only: it may select documents,
 * and change those that exist, but creates none.
 */
export interface Partitioning {
  /** What the key is: operators read it (docs/scaling.md). */
  readonly by: 'instance' | 'room';
  /** The key of the partition folding this event, or null: every partition, on its own documents. */
  event(event: RecordedEvent): string | null;
  /** The key of the partition a document belongs to. */
  document(document: Document): string;
}

export const checkpointName = (p: ProjectionDefinition): string => `${p.name}_v${p.version}`;

/**
 * Where a projection version keeps a collection: `<collection>_v<version>`, so a bumped
 * version builds beside the one that serves until it has caught up. Projections name their
 * collections without a version; the runner and the queries add it.
 */
export const physicalCollection = (collection: string, version: number): string => `${collection}_v${version}`;

/** A projection version's collections as the store holds them. */
export const physicalCollectionSpecs = (definition: ProjectionDefinition): CollectionSpec[] =>
  definition.collections.map((spec) => ({ ...spec, name: physicalCollection(spec.name, definition.version) }));
