import { LogPosition } from '../../domain/event';
import { CollectionSpec, DocumentChange, LeaseFence, ReadModelStore, StoredLease } from '../../ports/read-model-store.port';
import type { ProjectionDefinition } from '../../../../projections/projection';
import { ForwardingReadModelStore } from './forwarding-read-model-store';

/** A store of its own for some projections: their collections (physical names), checkpoints and leases. */
export interface ApartStore {
  readonly store: ReadModelStore;
  readonly holdsCollection: (collection: string) => boolean;
  /** Checkpoint names, which are also the leases' names. */
  readonly holdsName: (name: string) => boolean;
}

/** A physical collection or checkpoint name without its version (`message_search_v1`: `message_search`). */
const unversioned = (name: string): string => name.replace(/_v\d+$/, '');

/** What a store apart holds of `definitions`: their collections and checkpoints in every version. */
export function apartFor(store: ReadModelStore, definitions: readonly ProjectionDefinition[]): ApartStore {
  const collections = new Set(definitions.flatMap((d) => d.collections.map((c) => c.name)));
  const names = new Set(definitions.map((d) => d.name));
  return {
    store,
    holdsCollection: (collection) => collections.has(unversioned(collection)),
    holdsName: (name) => names.has(unversioned(name)),
  };
}

/**
 * The read models as one store over two: the projections kept apart (message search on SQLite:
 * `search.sqlite`, with its own connections and write lock, so its large index writes never
 * hold `read-models.sqlite`'s lock) and the rest. Every call goes to the store of the
 * collection, checkpoint or lease it names. A batch naming both (a projection's new version
 * building beside the others) is written as two transactions, each with its own checkpoints
 * and fences, so each file stays consistent with its own checkpoints: a crash between them
 * leaves the second one's projections to fold those events again, as after any crash.
 * `inner` is the main store.
 */
export class SplitReadModels extends ForwardingReadModelStore {
  constructor(
    main: ReadModelStore,
    private readonly apart: ApartStore,
  ) {
    super(main);
  }

  protected override storeOf(collection: string): ReadModelStore {
    return this.apart.holdsCollection(collection) ? this.apart.store : this.inner;
  }

  protected override storeNamed(name: string): ReadModelStore {
    return this.apart.holdsName(name) ? this.apart.store : this.inner;
  }

  /** `items` split into the main store's and the apart store's. */
  private split<T>(items: readonly T[], isApart: (item: T) => boolean): [T[], T[]] {
    const main: T[] = [];
    const apart: T[] = [];
    for (const item of items) (isApart(item) ? apart : main).push(item);
    return [main, apart];
  }

  override async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    const [main, apart] = this.split(specs, (spec) => this.apart.holdsCollection(spec.name));
    if (main.length) await this.inner.ensureCollections(main);
    if (apart.length) await this.apart.store.ensureCollections(apart);
  }

  override async buildDeferredIndexes(collections: readonly string[]): Promise<void> {
    const [main, apart] = this.split(collections, (c) => this.apart.holdsCollection(c));
    if (main.length) await this.inner.buildDeferredIndexes(main);
    if (apart.length) await this.apart.store.buildDeferredIndexes(apart);
  }

  override async applyBatch(
    changes: readonly DocumentChange[],
    checkpoints: Readonly<Record<string, LogPosition>>,
    fences: readonly LeaseFence[] = [],
  ): Promise<void> {
    const [mainChanges, apartChanges] = this.split(changes, (c) => this.apart.holdsCollection(c.collection));
    const [mainMarks, apartMarks] = this.split(Object.entries(checkpoints), ([name]) => this.apart.holdsName(name));
    const [mainFences, apartFences] = this.split(fences, (f) => this.apart.holdsName(f.name));
    if (apartChanges.length || apartMarks.length || apartFences.length) {
      await this.apart.store.applyBatch(apartChanges, Object.fromEntries(apartMarks), apartFences);
    }
    if (mainChanges.length || mainMarks.length || mainFences.length || (!apartChanges.length && !apartMarks.length && !apartFences.length)) {
      await this.inner.applyBatch(mainChanges, Object.fromEntries(mainMarks), mainFences);
    }
  }

  override async getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>> {
    const [main, apart] = this.split(projections, (name) => this.apart.holdsName(name));
    const found = main.length ? await this.inner.getCheckpoints(main) : new Map<string, LogPosition>();
    if (apart.length) for (const [name, position] of await this.apart.store.getCheckpoints(apart)) found.set(name, position);
    return found;
  }

  override async reset(collections: readonly string[], projections: readonly string[]): Promise<void> {
    const [mainCollections, apartCollections] = this.split(collections, (c) => this.apart.holdsCollection(c));
    const [mainNames, apartNames] = this.split(projections, (name) => this.apart.holdsName(name));
    if (apartCollections.length || apartNames.length) await this.apart.store.reset(apartCollections, apartNames);
    if (mainCollections.length || mainNames.length) await this.inner.reset(mainCollections, mainNames);
  }

  override async leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    const [main, apart] = this.split(names, (name) => this.apart.holdsName(name));
    const found = main.length ? await this.inner.leases(main) : new Map<string, StoredLease>();
    if (apart.length) for (const [name, lease] of await this.apart.store.leases(apart)) found.set(name, lease);
    return found;
  }

  override async overwriteFreedSpace(): Promise<void> {
    await Promise.all([this.inner.overwriteFreedSpace?.(), this.apart.store.overwriteFreedSpace?.()]);
  }

  override async close(): Promise<void> {
    await Promise.all([this.inner.close(), this.apart.store.close()]);
  }
}
