import { LogPosition } from '../../domain/event';
import {
  BatchLimit,
  CollectionSpec,
  Document,
  DocumentChange,
  LeaseFence,
  Query,
  ReadModelStore,
  StoredDocument,
  StoredLease,
  TextMatch,
  TextSearch,
} from '../../ports/read-model-store.port';

/**
 * A read-model store that passes every call on to `inner`: the base of the wrappers that change
 * where some calls go (VersionedReadModels: the collection of the serving version;
 * SplitReadModels: the store apart for some projections), so each wrapper states only what it
 * changes and a method added to the port is forwarded by every wrapper at once.
 *
 * A call naming one collection goes to `storeOf(collection)` under `nameOf(collection)`; a call
 * naming one checkpoint or lease goes to `storeNamed(name)`. A subclass overrides those hooks,
 * and the calls naming several things at once where it splits them.
 */
export abstract class ForwardingReadModelStore implements ReadModelStore {
  constructor(protected readonly inner: ReadModelStore) {}

  get batchLimit(): BatchLimit | undefined {
    return this.inner.batchLimit;
  }

  /** The store holding `collection` (as the caller names it). */
  protected storeOf(_collection: string): ReadModelStore {
    return this.inner;
  }

  /** The name `collection` has in the store holding it. */
  protected nameOf(collection: string): string {
    return collection;
  }

  /** The store holding the checkpoint or lease `name`. */
  protected storeNamed(_name: string): ReadModelStore {
    return this.inner;
  }

  get<D extends Document = Document>(collection: string, id: string): Promise<D | null> {
    return this.storeOf(collection).get<D>(this.nameOf(collection), id);
  }

  getMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<D[]> {
    return this.storeOf(collection).getMany<D>(this.nameOf(collection), ids);
  }

  getStored<D extends Document = Document>(collection: string, id: string): Promise<StoredDocument<D> | null> {
    return this.storeOf(collection).getStored<D>(this.nameOf(collection), id);
  }

  getStoredMany<D extends Document = Document>(collection: string, ids: readonly string[]): Promise<StoredDocument<D>[]> {
    return this.storeOf(collection).getStoredMany<D>(this.nameOf(collection), ids);
  }

  find<D extends Document = Document>(collection: string, query?: Query): Promise<D[]> {
    return this.storeOf(collection).find<D>(this.nameOf(collection), query);
  }

  count(collection: string, where?: Query['where']): Promise<number> {
    return this.storeOf(collection).count(this.nameOf(collection), where);
  }

  searchText<D extends Document = Document>(collection: string, search: TextSearch): Promise<TextMatch<D>[]> {
    return this.storeOf(collection).searchText<D>(this.nameOf(collection), search);
  }

  findStored<D extends Document = Document>(collection: string, query?: Query): Promise<StoredDocument<D>[]> {
    return this.storeOf(collection).findStored<D>(this.nameOf(collection), query);
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
    return this.storeNamed(projection).getCheckpoint(projection);
  }

  getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>> {
    return this.inner.getCheckpoints(projections);
  }

  reset(collections: readonly string[], projections: readonly string[]): Promise<void> {
    return this.inner.reset(collections, projections);
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.storeNamed(name).acquireLease(name, owner, ttlMs);
  }

  releaseLease(name: string, owner: string): Promise<void> {
    return this.storeNamed(name).releaseLease(name, owner);
  }

  leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    return this.inner.leases(names);
  }

  async overwriteFreedSpace(): Promise<void> {
    await this.inner.overwriteFreedSpace?.();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
