import { Collection, CreateIndexesOptions, Db, MongoClient, MongoServerError } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { LogPosition } from '../../../shared/domain/event';
import {
  BatchLimit,
  BatchTooLargeError,
  CollectionSpec,
  Document,
  DocumentChange,
  LeaseFence,
  LeaseLostError,
  StoredLease,
  Query,
  ReadModelStore,
  ReadModelWriteError,
  StoredDocument,
  TextMatch,
  TextSearch,
} from '../../../shared/ports/read-model-store.port';
import { searchTextRows, textIndexesOf } from './mongo-text-search';
import { collectionName, indexesOf, Row, toFilter, toSort } from './mongo-queries';
import { writesByCollection } from './mongo-batch-writes';
import { LeaseRow, MongoLeases } from './mongo-leases';

interface CheckpointRow {
  _id: string;
  position: LogPosition;
}

const NAMESPACE_EXISTS = 48;
const COMMAND_NOT_FOUND = 59;
const INDEX_NOT_FOUND = 27;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * What one batch transaction carries at most: well within the 60 s transaction lifetime and a
 * small WiredTiger cache, and short enough that a lease renewal waiting behind it (a write to the
 * lease document the transaction fenced) does not wait long.
 */
export const MONGO_BATCH_LIMIT: BatchLimit = { changes: 1_000, bytes: 8 * 1024 * 1024 };

/** The server's refusals of a transaction that is too large, whatever its content: smaller ones will do. */
const TOO_LARGE = new Set(['TransactionTooLargeForCache', 'TransactionExceededLifetimeLimitSeconds']);

export interface MongoReadModelStoreOptions {
  readonly batchLimit?: BatchLimit;
  /** The clock leases are taken and fenced by (ms since the epoch); tests move it. */
  readonly clock?: () => number;
}


/**
 * Transactions need a replica set (or a sharded cluster); on a standalone server every batch
 * would fail. Refuse at connect with what to do, naming the variable, never its value (it may
 * hold credentials).
 */
async function requireReplicaSet(client: MongoClient): Promise<void> {
  const admin = client.db('admin');
  const hello = await admin.command({ hello: 1 }).catch((error: unknown) => {
    if (error instanceof MongoServerError && error.code === COMMAND_NOT_FOUND) return admin.command({ isMaster: 1 });
    throw error;
  });
  if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return;
  throw new Error(
    'MONGODB_URI points at a standalone MongoDB server, but Parley needs a replica set for its transactions ' +
      '(a single-node replica set will do: start mongod with --replSet rs0 and run rs.initiate() once)',
  );
}

/**
 * Read models in MongoDB. The document is kept whole under `doc` (a document's fields can never
 * clash with the row's own), so get/find return exactly what was put. Batches and their
 * checkpoints commit in one multi-document transaction, which needs a replica set (a
 * single-node replica set will do; `connect` refuses a standalone server). The guards of
 * `applyBatch` are in the server's own updates: a put replaces a document only from a later
 * position, a checkpoint moves with `$max`, and fences write their leases in the transaction.
 */
export class MongoReadModelStore implements ReadModelStore {
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly checkpoints: Collection<CheckpointRow>;
  private readonly leaseTable: MongoLeases;
  /** Collections known to exist; a batch naming any other fails, as it does in SQLite. */
  private readonly declared = new Set<string>();

  /** Closes (or gives back) the client when the store closes. */
  private readonly releaseClient: () => Promise<void>;
  readonly batchLimit: BatchLimit;
  private readonly clock: () => number;

  static async connect(uri: string, dbName = 'parley', options: MongoReadModelStoreOptions = {}): Promise<MongoReadModelStore> {
    const shared = await acquireMongoClient(uri);
    try {
      await requireReplicaSet(shared.client);
    } catch (error) {
      await shared.release().catch(() => undefined);
      throw error;
    }
    return new MongoReadModelStore(shared.client, dbName, shared.release, options);
  }

  /** A client handed in is closed with the store unless `release` says otherwise. */
  constructor(clientOrUri: MongoClient | string, dbName = 'parley', release?: () => Promise<void>, options: MongoReadModelStoreOptions = {}) {
    this.batchLimit = options.batchLimit ?? MONGO_BATCH_LIMIT;
    this.clock = options.clock ?? Date.now;
    this.client = typeof clientOrUri === 'string' ? new MongoClient(clientOrUri) : clientOrUri;
    this.releaseClient = release ?? (() => this.client.close());
    this.db = this.client.db(dbName);
    this.checkpoints = this.db.collection<CheckpointRow>('checkpoints');
    this.leaseTable = new MongoLeases(this.db.collection<LeaseRow>('leases'), this.clock);
  }

  private rows(collection: string): Collection<Row> {
    return this.db.collection<Row>(collectionName(collection));
  }

  /** Created explicitly: inside a transaction an implicit creation may conflict with a concurrent one. */
  private async createCollection(name: string): Promise<void> {
    await this.db.createCollection(name).catch((error: unknown) => {
      if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
    });
  }

  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    // The batches' transactions write these too.
    await this.createCollection(this.checkpoints.collectionName);
    await this.createCollection(this.leaseTable.rows.collectionName);
    for (const spec of specs) {
      const name = collectionName(spec.name);
      await this.createCollection(name);
      for (const { keys, options } of indexesOf(spec)) await this.createIndex(name, keys, options);
      for (const { keys, name: indexName, options } of textIndexesOf(spec)) await this.createIndex(name, keys, { ...options, name: indexName });
      this.declared.add(spec.name);
    }
  }

  /** An index declared anew with other options (e.g. another filter) replaces the stored one. */
  private async createIndex(collection: string, keys: Record<string, 1 | -1 | 'text'>, options: CreateIndexesOptions & { name: string }): Promise<void> {
    const indexes = this.db.collection(collection);
    try {
      await indexes.createIndex(keys, options);
    } catch (error) {
      if (!(error instanceof MongoServerError && (error.code === INDEX_OPTIONS_CONFLICT || error.code === INDEX_KEY_SPECS_CONFLICT))) throw error;
      await indexes.dropIndex(options.name).catch((dropped: unknown) => {
        if (!(dropped instanceof MongoServerError && dropped.code === INDEX_NOT_FOUND)) throw dropped;
      });
      await indexes.createIndex(keys, options);
    }
  }

  async get<D extends Document>(collection: string, id: string): Promise<D | null> {
    const row = await this.rows(collection).findOne({ _id: id }, { projection: { doc: 1 } });
    return row ? (row.doc as D) : null;
  }

  async getMany<D extends Document>(collection: string, ids: readonly string[]): Promise<D[]> {
    if (ids.length === 0) return [];
    const rows = await this.rows(collection)
      .find({ _id: { $in: [...ids] } }, { projection: { doc: 1 } })
      .toArray();
    return rows.map((r) => r.doc as D);
  }

  async getStored<D extends Document>(collection: string, id: string): Promise<StoredDocument<D> | null> {
    const row = await this.rows(collection).findOne({ _id: id });
    return row ? { document: row.doc as D, position: row.position } : null;
  }

  /** MongoDB builds every index at `ensureCollections`: nothing is deferred. */
  async buildDeferredIndexes(): Promise<void> {
    return;
  }

  async getStoredMany<D extends Document>(collection: string, ids: readonly string[]): Promise<StoredDocument<D>[]> {
    if (ids.length === 0) return [];
    const rows = await this.rows(collection)
      .find({ _id: { $in: [...ids] } }, { projection: { doc: 1, position: 1 } })
      .toArray();
    return rows.map((r) => ({ document: r.doc as D, position: r.position }));
  }

  async find<D extends Document>(collection: string, query: Query = {}): Promise<D[]> {
    return (await this.findStored<D>(collection, query)).map((s) => s.document);
  }

  async count(collection: string, where: Query['where'] = {}): Promise<number> {
    return this.rows(collection).countDocuments(toFilter({ where }));
  }

  async searchText<D extends Document>(collection: string, search: TextSearch): Promise<TextMatch<D>[]> {
    return searchTextRows<D>(this.rows(collection), search);
  }

  async findStored<D extends Document>(collection: string, query: Query = {}): Promise<StoredDocument<D>[]> {
    // Mongo reads limit 0 as "no limit"; the port (and SQLite) mean none.
    if (query.limit !== undefined && query.limit <= 0) return [];
    const cursor = this.rows(collection).find(toFilter(query));
    const sort = toSort(query.sort);
    if (sort.length) cursor.sort(sort);
    if (query.limit !== undefined) cursor.limit(query.limit);
    const rows = await cursor.toArray();
    return rows.map((r) => ({ document: r.doc as D, position: r.position }));
  }

  async applyBatch(
    changes: readonly DocumentChange[],
    checkpoints: Readonly<Record<string, LogPosition>>,
    fences: readonly LeaseFence[] = [],
  ): Promise<void> {
    const marks = Object.entries(checkpoints);
    if (changes.length === 0 && marks.length === 0 && fences.length === 0) return;
    try {
      await this.applyInTransaction(changes, marks, fences);
    } catch (error) {
      if (error instanceof ReadModelWriteError || error instanceof LeaseLostError) throw error;
      // Since MongoDB 6.2 these are not transient: a retry of the same transaction fails the same way.
      if (error instanceof MongoServerError && TOO_LARGE.has(error.codeName ?? '')) {
        throw new BatchTooLargeError(`The batch of ${changes.length} changes is too large for one transaction: ${error.message}`, { cause: error });
      }
      throw new ReadModelWriteError(`The batch was not applied: ${(error as Error).message}`, { cause: error });
    }
  }

  private async applyInTransaction(
    changes: readonly DocumentChange[],
    marks: [string, LogPosition][],
    fences: readonly LeaseFence[],
  ): Promise<void> {
    await this.requireDeclared(new Set(changes.map((c) => c.collection)));
    const byCollection = writesByCollection(changes);
    const session = this.client.startSession();
    try {
      await session.withTransaction(
        async () => {
          // The fences first: a lost lease aborts the transaction before any write.
          await this.leaseTable.fence(fences, this.clock(), session);
          for (const [collection, ops] of byCollection) {
            await this.rows(collection).bulkWrite(ops, { session, ordered: true });
          }
          if (marks.length) {
            await this.checkpoints.bulkWrite(
              marks.map(([name, position]) => ({
                // $max: a checkpoint only moves forward (positions are fixed-width strings).
                updateOne: { filter: { _id: name }, update: { $max: { position } }, upsert: true },
              })),
              { session, ordered: true },
            );
          }
        },
        { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } },
      );
    } finally {
      await session.endSession();
    }
  }

  async getCheckpoint(projection: string): Promise<LogPosition | null> {
    return (await this.checkpoints.findOne({ _id: projection }))?.position ?? null;
  }

  async getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>> {
    if (!projections.length) return new Map();
    const rows = await this.checkpoints.find({ _id: { $in: [...projections] } }).toArray();
    return new Map(rows.map((r) => [r._id, r.position]));
  }

  /**
   * Drops cannot run in a transaction, so checkpoints go first: a crash half-way leaves old
   * documents with no checkpoint (a rebuild resets again), never a checkpoint over missing data.
   *
   * Not fenced: the caller holds the projections' leases first (the rebuild CLI takes them, and
   * refuses while a live worker holds one). A worker that still counts a dropped collection as
   * declared cannot write into it meanwhile: its batches are fenced by the leases it lost, and
   * the fence comes first in the transaction, which then aborts before any write could create
   * the collection again (without its indexes).
   */
  async reset(collections: readonly string[], projections: readonly string[]): Promise<void> {
    if (projections.length) await this.checkpoints.deleteMany({ _id: { $in: [...projections] } });
    for (const collection of collections) {
      await this.rows(collection).drop(); // the driver ignores a missing collection
      this.declared.delete(collection);
    }
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leaseTable.acquire(name, owner, ttlMs);
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.leaseTable.release(name, owner);
  }

  async leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    return this.leaseTable.list(names);
  }

  async close(): Promise<void> {
    await this.releaseClient();
  }

  private async requireDeclared(collections: ReadonlySet<string>): Promise<void> {
    for (const collection of collections) {
      if (this.declared.has(collection)) continue;
      // Declared by another process (e.g. the projector) counts too.
      const found = await this.db.listCollections({ name: collectionName(collection) }, { nameOnly: true }).toArray();
      if (found.length === 0) throw new ReadModelWriteError(`Collection ${collection} was not declared (ensureCollections)`);
      this.declared.add(collection);
    }
  }
}
