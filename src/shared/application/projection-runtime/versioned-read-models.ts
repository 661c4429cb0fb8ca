import { LogPosition } from '../../domain/event';
import {
  BatchLimit,
  CollectionSpec,
  Document,
  DocumentChange,
  LeaseFence,
  StoredLease,
  Query,
  ReadModelStore,
  StoredDocument,
  TextMatch,
  TextSearch,
} from '../../ports/read-model-store.port';
import { ProjectionVersions } from './projection-versions';

/**
 * The read-model store as queries see it: collections are named as projections name them
 * (`users`, `messages`…) and read from whichever version of their projection serves now.
 * Writes, checkpoints and leases pass through unchanged (the projector runner names physical
 * collections itself).
 */
export class VersionedReadModels implements ReadModelStore {
  constructor(
    private readonly inner: ReadModelStore,
    private readonly versions: ProjectionVersions,
  ) {}

  get batchLimit(): BatchLimit | undefined {
    return this.inner.batchLimit;
  }

  private physical(collection: string): string {
    return this.versions.collection(collection);
  }

  get<D extends Document = Document>(collection: string, id: string): Promise<D | null> {
    return this.inner.get<D>(this.physical(collection), id);
  }

  getMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<D[]> {
    return this.inner.getMany<D>(this.physical(collection), ids);
  }

  getStored<D extends Document = Document>(collection: string, id: string): Promise<StoredDocument<D> | null> {
    return this.inner.getStored<D>(this.physical(collection), id);
  }

  getStoredMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<StoredDocument<D>[]> {
    return this.inner.getStoredMany<D>(this.physical(collection), ids);
  }

  find<D extends Document = Document>(collection: string, query?: Query): Promise<D[]> {
    return this.inner.find<D>(this.physical(collection), query);
  }

  count(collection: string, where?: Query['where']): Promise<number> {
    return this.inner.count(this.physical(collection), where);
  }

  searchText<D extends Document = Document>(collection: string, search: TextSearch): Promise<TextMatch<D>[]> {
    return this.inner.searchText<D>(this.physical(collection), search);
  }

  findStored<D extends Document = Document>(collection: string, query?: Query): Promise<StoredDocument<D>[]> {
    return this.inner.findStored<D>(this.physical(collection), query);
  }

  ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    return this.inner.ensureCollections(specs);
  }

  buildDeferredIndexes(collections: readonly string[]): Promise<void> {
    return this.inner.buildDeferredIndexes(collections);
  }

  applyBatch(
    changes: readonly DocumentChange[],
    checkpoints: Readonly<Record<string, LogPosition>>,
    fences?: readonly LeaseFence[],
  ): Promise<void> {
    return this.inner.applyBatch(changes, checkpoints, fences);
  }

  getCheckpoint(projection: string): Promise<LogPosition | null> {
    return this.inner.getCheckpoint(projection);
  }

  getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>> {
    return this.inner.getCheckpoints(projections);
  }

  reset(collections: readonly string[], projections: readonly string[]): Promise<void> {
    return this.inner.reset(collections, projections);
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.inner.acquireLease(name, owner, ttlMs);
  }

  releaseLease(name: string, owner: string): Promise<void> {
    return this.inner.releaseLease(name, owner);
  }

  leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    return this.inner.leases(names);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
