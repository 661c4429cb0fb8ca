import { AnyBulkWriteOperation, Collection, CreateIndexesOptions, Db, Filter, MongoClient, MongoServerError, SortDirection } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { namesByOwner, takeOrRenewLease } from '../../shared/leases';
import { LogPosition } from '../../../shared/domain/event';
import {
  BatchLimit,
  BatchTooLargeError,
  CollectionSpec,
  Condition,
  Document,
  DocumentChange,
  LeaseFence,
  LeaseLostError,
  StoredLease,
  Query,
  ReadModelStore,
  ReadModelWriteError,
  StoredDocument,
} from '../../../shared/ports/read-model-store.port';

/** A read-model document as stored: the document untouched under `doc`, beside its position. */
interface Row {
  _id: string;
  doc: Document;
  position: LogPosition;
}
interface CheckpointRow {
  _id: string;
  position: LogPosition;
}
interface LeaseRow {
  _id: string;
  owner: string;
  /** Milliseconds since the epoch on the clock of the process that took or renewed it. */
  expiresAt: number;
  /** Bumped by every fenced batch, so that the batch's transaction writes the lease (see applyBatch). */
  fencedBatches?: number;
}

// The same naming rules as the SQLite adapter, so a projection valid on one is valid on both.
const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Read models live in `rm_<name>`, apart from the `checkpoints` and `leases` collections. */
const collectionName = (collection: string): string => {
  if (!NAME.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
  return `rm_${collection}`;
};
/** Queried fields address `doc.<field>`; `_id` is the row's own key (and its index). */
const path = (field: string): string => {
  if (!FIELD.test(field)) throw new Error(`Invalid field name: ${field}`);
  return field === '_id' ? '_id' : `doc.${field}`;
};

const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const COMMAND_NOT_FOUND = 59;
const INDEX_NOT_FOUND = 27;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * The documents a unique index holds: those whose fields all hold a value. As in SQLite, where
 * a unique index never counts NULLs as equal, documents lacking one of the fields or holding
 * `null` there never collide (`$exists` would index explicit nulls). Documents pass through
 * JSON, so these are all the types a value can have. (The query planner cannot prove that an
 * equality implies a `$type` filter: such an index enforces uniqueness, but queries on its
 * fields do not use it.)
 */
const holdingValues = (paths: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(paths.map((p) => [p, { $type: ['string', 'number', 'bool', 'object', 'array'] }]));

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
 * A whole-document replacement that happens only when `position` is later than the stored
 * one (or nothing is stored: the upsert then starts from `{_id}`), decided by the server in
 * the update itself. An upsert filtered on the position would instead fail with a duplicate
 * key on a newer document, and inside a transaction any write error aborts the transaction.
 */
const replaceIfLater = (document: Document, position: LogPosition): Record<string, unknown>[] => [
  {
    $replaceWith: {
      $cond: {
        if: { $or: [{ $eq: [{ $type: '$position' }, 'missing'] }, { $lt: ['$position', position] }] },
        // $literal: the document's own values (a string starting with `$`) are data, not expressions.
        then: { _id: '$_id', doc: { $literal: document }, position: { $literal: position } },
        else: '$$ROOT',
      },
    },
  },
];

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
  private readonly leaseRows: Collection<LeaseRow>;
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
    this.leaseRows = this.db.collection<LeaseRow>('leases');
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
    await this.createCollection(this.leaseRows.collectionName);
    for (const spec of specs) {
      const name = collectionName(spec.name);
      await this.createCollection(name);
      for (const index of spec.indexes ?? []) {
        const fields = index.fields.map((f) => (typeof f === 'string' ? { field: f, descending: false } : f));
        const keys: Record<string, 1 | -1> = {};
        for (const f of fields) keys[path(f.field)] = f.descending ? -1 : 1;
        await this.createIndex(name, keys, {
          name: `ix_${fields.map((f) => (f.descending ? `${f.field}_desc` : f.field)).join('_')}`,
          unique: index.unique ?? false,
          ...(index.unique ? { partialFilterExpression: holdingValues(fields.map((f) => path(f.field))) } : {}),
        });
      }
      this.declared.add(spec.name);
    }
  }

  /** An index declared anew with other options (e.g. another filter) replaces the stored one. */
  private async createIndex(collection: string, keys: Record<string, 1 | -1>, options: CreateIndexesOptions & { name: string }): Promise<void> {
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

  async findStored<D extends Document>(collection: string, query: Query = {}): Promise<StoredDocument<D>[]> {
    // Mongo reads limit 0 as "no limit"; the port (and SQLite) mean none.
    if (query.limit !== undefined && query.limit <= 0) return [];
    const cursor = this.rows(collection).find(toFilter(query));
    const sort = (query.sort ?? []).map((s): [string, SortDirection] => [path(s.field), s.descending ? -1 : 1]);
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
    // Per collection, in batch order: changes to one document keep their order.
    const byCollection = new Map<string, AnyBulkWriteOperation<Row>[]>();
    for (const change of changes) {
      let ops = byCollection.get(change.collection);
      if (!ops) byCollection.set(change.collection, (ops = []));
      ops.push(
        change.kind === 'put'
          ? {
              updateOne: {
                filter: { _id: change.document._id },
                // Through JSON, as SQLite stores it: `undefined` fields vanish instead of becoming null.
                update: replaceIfLater(JSON.parse(JSON.stringify(change.document)) as Document, change.position),
                upsert: true,
              },
            }
          : { deleteOne: { filter: { _id: change.id } } },
      );
    }
    const session = this.client.startSession();
    try {
      await session.withTransaction(
        async () => {
          const now = this.clock();
          for (const [owner, names] of namesByOwner(fences)) {
            // A write rather than a read: a takeover of a lease (acquireLease, outside any
            // transaction) then conflicts with this transaction instead of slipping past a
            // snapshot read. Whichever commits first wins; a retried callback sees the new owner.
            const fenced = await this.leaseRows.updateMany(
              { _id: { $in: names }, owner, expiresAt: { $gte: now } },
              { $inc: { fencedBatches: 1 } },
              { session },
            );
            if (fenced.matchedCount !== names.length) {
              const held = await this.leaseRows
                .find({ _id: { $in: names }, owner, expiresAt: { $gte: now } }, { session, projection: { _id: 1 } })
                .toArray();
              const lost = names.find((name) => !held.some((row) => row._id === name)) ?? names[0];
              throw new LeaseLostError(lost, owner);
            }
          }
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
    return takeOrRenewLease(ttlMs, this.clock, async (now) => {
      try {
        // Matches only a lease we hold or one that ran out; when none matches, the upsert tries
        // to insert a second row with the same _id and fails: someone else holds it.
        const row = await this.leaseRows.findOneAndUpdate(
          { _id: name, $or: [{ owner }, { expiresAt: { $lt: now } }] },
          { $set: { owner, expiresAt: now + ttlMs } },
          { upsert: true, returnDocument: 'after' },
        );
        return row?.owner === owner;
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
        throw error;
      }
    });
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.leaseRows.deleteOne({ _id: name, owner });
  }

  async leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    const rows = await this.leaseRows.find({ _id: { $in: [...names] } }).toArray();
    return new Map(rows.map((r) => [r._id, { owner: r.owner, expiresAtMs: r.expiresAt }]));
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

function toFilter(query: Query): Filter<Row> {
  const filter: Record<string, unknown> = {};
  for (const [field, condition] of Object.entries(query.where ?? {})) {
    const key = path(field);
    const translated = toCondition(condition);
    if (translated !== undefined) filter[key] = translated;
  }
  return filter as Filter<Row>;
}

/** `null` (alone or in `in`) matches null and missing fields in MongoDB, as in SQLite. */
function toCondition(condition: Condition): unknown {
  if (condition === null || typeof condition !== 'object') return condition;
  if ('in' in condition) return { $in: [...condition.in] };
  const range: Record<string, unknown> = {};
  if (condition.gt !== undefined) range.$gt = condition.gt;
  if (condition.gte !== undefined) range.$gte = condition.gte;
  if (condition.lt !== undefined) range.$lt = condition.lt;
  if (condition.lte !== undefined) range.$lte = condition.lte;
  // An empty range is no condition (it would otherwise mean "equals {}").
  return Object.keys(range).length ? range : undefined;
}
