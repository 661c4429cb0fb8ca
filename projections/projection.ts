/**
 * A projection is pure: it names the events it folds, the documents each event touches and
 * how a document changes. The runner (src/shared/application/projection-runtime/projector-runner.ts) owns all I/O:
 * batching, the position guard on every document, checkpoints and the lease.
 *
 * Only type imports from src/shared: no framework, driver or store reaches this folder.
 */
import type { RecordedEvent } from '../src/shared/domain/event';
import type { CollectionSpec, Condition, Document } from '../src/shared/ports/read-model-store.port';

export type { Document };

/** One document by key; `evolve` receives null when it does not exist yet. */
export interface DocumentRef {
  readonly collection: string;
  readonly id: string;
}

/** Every existing document matching `where` (e.g. all memberships of a deleted user). */
export interface DocumentSelection {
  readonly collection: string;
  readonly where: Readonly<Record<string, Condition>>;
}

export type Target = DocumentRef | DocumentSelection;

export const isRef = (t: Target): t is DocumentRef => 'id' in t;

export interface ProjectionDefinition {
  /** Stable name: the checkpoint and the lease are kept under it. Bump `version` to rebuild into new collections. */
  readonly name: string;
  readonly version: number;
  readonly collections: readonly CollectionSpec[];
  readonly handles: readonly string[];
  /**
   * Every reader of it waits for it to reach the log's head first (the audit index): a write
   * then never waits for it, so its lag or its failure holds no write's answer up.
   */
  readonly awaitedByReaders?: true;
  targets(event: RecordedEvent): readonly Target[];
  /** The new document, or null to remove it. Must not mutate `document`. */
  evolve(document: Document | null, event: RecordedEvent, target: DocumentRef): Document | null;
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
