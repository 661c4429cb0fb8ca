import type Database from 'better-sqlite3';
import { LogPosition } from '../../../shared/domain/event';
import {
  BatchLimit,
  CollectionSpec,
  Document,
  DocumentChange,
  LeaseFence,
  LeaseLostError,
  LogPointer,
  StoredLease,
  Query,
  ReadModelStore,
  ReadModelWriteError,
  StoredDocument,
  TextIndexSpec,
  TextMatch,
  TextSearch,
} from '../../../shared/ports/read-model-store.port';
import { WalCheckpointer } from '../../shared/sqlite-wal-checkpointer';
import { SqliteLeases } from './sqlite-leases';
import { indexDefinition, laterPositionPutSql, orderTerms, table, whereClause } from './read-model-sql';
import { CollectionLayout, createTableSql, JSON_LAYOUT, layoutOfTable } from './collection-layout';
import { createTextCollection, searchTextCollection, textPutSql, textTable } from './text-search';
import { createLogPointerTables, isLogPointerTable, LogPointerTable, namesTable } from './log-pointer-table';
import { BUSY_TIMEOUT_MS, IN_MEMORY, openReadModelDatabase } from './schema';

export { IN_MEMORY } from './schema';

/** Where a row is the one of a key's values (`CollectionLayout.keyOf`). */
const keyCondition = (layout: CollectionLayout): string => layout.keyColumns.map((c) => `${c} = ?`).join(' AND ');

/** A row read: the layout's columns and the position the document reflects. */
type Row = Record<string, unknown> & { position: unknown };

export interface SqliteReadModelStoreOptions {
  /**
   * SQLite's `max_page_count`: past this many pages writes fail with SQLITE_FULL, as on a full
   * disk. A size bound for operators, and how fault tests fill the "disk" without a mount.
   */
  readonly maxPageCount?: number;
  /**
   * SQLite holds a batch of any size in one transaction, so none is set by default; a bound
   * makes projectors split their batches as they do on MongoDB (tests exercise that here).
   */
  readonly batchLimit?: BatchLimit;
  /** The clock leases are taken and fenced by (ms since the epoch); tests move it. */
  readonly clock?: () => number;
}

/**
 * Read models in SQLite: one table per collection holding each document as JSON beside the
 * log position it reflects, or, for a collection declared with `columns`, each field in a column
 * (`collection-layout.ts`); declared indexes become indexes on the JSON fields or the columns.
 * Read models are disposable (rebuilt from the log), so commits need not fsync: a crash
 * loses a suffix of batches together with their checkpoints, and the projector redoes them.
 *
 * Every write runs in one synchronous IMMEDIATE transaction, so no transaction is ever open
 * between calls; one found open is the remains of a failure (see `recover`).
 */
export class SqliteReadModelStore implements ReadModelStore {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** A batch's writes by collection, without building and looking up their SQL per change. */
  private readonly writers = new Map<string, { put: Database.Statement; remove: Database.Statement; layout: CollectionLayout }>();
  /** How each collection's table holds its documents (read from the table itself). */
  private readonly layouts = new Map<string, CollectionLayout>();
  /** The collections of log pointers (`log-pointer-table.ts`), as their tables show (remembered once the table exists). */
  private readonly pointerTables = new Map<string, LogPointerTable | null>();
  /**
   * Collections created empty whose secondary indexes are not built yet (listed in the
   * `deferred_indexes` table, so a crash mid-build leaves them listed and still deferred).
   */
  private readonly deferred = new Set<string>();
  /** The text-indexed collections `ensureCollections` declared, by name (`text-search.ts`). */
  private readonly textSpecs = new Map<string, TextIndexSpec>();
  /** None in memory: there is no WAL to copy. */
  private readonly checkpointer: WalCheckpointer | null;
  readonly batchLimit?: BatchLimit;
  private readonly clock: () => number;
  private readonly leaseTable: SqliteLeases;

  /** `file` is the database file, or `IN_MEMORY` for read models held in memory while the store is open (projection specs fold into one). */
  constructor(file: string, options: SqliteReadModelStoreOptions = {}) {
    this.batchLimit = options.batchLimit;
    this.clock = options.clock ?? Date.now;
    const inMemory = file === IN_MEMORY;
    this.db = openReadModelDatabase(file, options);
    for (const row of this.db.prepare('SELECT DISTINCT collection FROM deferred_indexes').all() as { collection: string }[]) {
      this.deferred.add(row.collection);
    }
    if (!inMemory) this.emptyWalAtOpen();
    this.checkpointer = inMemory ? null : new WalCheckpointer(file);
    this.leaseTable = new SqliteLeases((sql) => this.prepared(sql), this.clock, () => this.recover());
  }

  /**
   * A WAL left by a process that died may still hold older copies of deleted documents. Best
   * effort, without waiting: where another process (a server beside a CLI) is using the file,
   * its own truncations after deletes take care of it.
   */
  private emptyWalAtOpen(): void {
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // Busy or failing storage: the next truncation after a delete does it.
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  private prepared(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** A collection's layout, as its table shows it (remembered once the table exists). */
  private layout(collection: string): CollectionLayout {
    let layout = this.layouts.get(collection);
    if (!layout) {
      const found = layoutOfTable(this.db, table(collection));
      if (!found) return JSON_LAYOUT;
      this.layouts.set(collection, (layout = found));
    }
    return layout;
  }

  /** The collection's pointer table, if it is a collection of log pointers. */
  private pointers(collection: string): LogPointerTable | null {
    let pointers = this.pointerTables.get(collection);
    if (pointers === undefined) {
      if (!this.prepared(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table(collection))) return null;
      pointers = isLogPointerTable(this.db, collection) ? new LogPointerTable((sql) => this.prepared(sql), collection) : null;
      this.pointerTables.set(collection, pointers);
    }
    return pointers;
  }

  private writer(collection: string): { put: Database.Statement; remove: Database.Statement; layout: CollectionLayout } {
    let writer = this.writers.get(collection);
    if (!writer) {
      const t = table(collection);
      const text = this.textSpecs.get(collection);
      if (!text && this.prepared(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(textTable(collection))) {
        throw new Error(`The text-indexed collection ${collection} is written before ensureCollections declared it`);
      }
      const layout = this.layout(collection);
      writer = {
        // Only a later position replaces a document: a redelivered event changes nothing.
        put: this.prepared(
          text
            ? textPutSql(collection, text, layout)
            : laterPositionPutSql(t, [...layout.written, 'position'], [], layout.keyColumns),
        ),
        remove: this.prepared(`DELETE FROM "${t}" WHERE ${keyCondition(layout)}`),
        layout,
      };
      this.writers.set(collection, writer);
    }
    return writer;
  }

  /** Statements name tables: after tables change they are prepared again. */
  private forgetStatements(): void {
    this.statements.clear();
    this.writers.clear();
    this.layouts.clear();
    this.pointerTables.clear();
  }

  /**
   * better-sqlite3 rolls a failed transaction back, but when the ROLLBACK fails too (an I/O
   * error, a full disk) the transaction stays open: later reads would see the failed batch's
   * uncommitted rows and later writes would join it. Each call first ends such a leftover, so
   * the connection works again as soon as the storage does.
   */
  private recover(): void {
    if (this.db.open && this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /** Runs `work` in an IMMEDIATE transaction; on failure nothing is left open. */
  private write<T>(work: () => T): T {
    this.recover();
    try {
      return this.db.transaction(work).immediate();
    } catch (error) {
      try {
        this.recover();
      } catch {
        // Still open: the next call tries again.
      }
      throw error;
    }
  }

  /**
   * A collection created here starts empty: its secondary (non-unique) indexes are only
   * recorded, and built by `buildDeferredIndexes` or before the first query that could use
   * them. A rebuild fills the table several times faster without them, and CREATE INDEX over
   * a filled table costs far less than the same entries inserted one by one. Unique indexes
   * are built at once: they refuse writes.
   */
  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    this.write(() => {
      for (const spec of specs) {
        const t = table(spec.name);
        const created = !this.prepared(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(t);
        if (spec.logPointers) {
          if (created) createLogPointerTables(this.db, spec.name);
          continue; // keyed by name and position: no other index
        }
        if (spec.text) this.textSpecs.set(spec.name, spec.text);
        if (created && spec.text) createTextCollection(this.db, spec.name, spec.text, spec.columns, spec.key);
        else if (created) this.db.exec(createTableSql(t, spec.columns, spec.key));
        const { fieldOf, key } = layoutOfTable(this.db, t)!;
        (spec.indexes ?? []).forEach((index) => {
          // The key's own index answers what an index of its first fields would.
          if (!index.unique && key && index.fields.length <= key.length && index.fields.every((f, i) => f === key[i])) return;
          const { name, sql } = indexDefinition(spec.name, index, fieldOf);
          if (created && !index.unique) {
            this.prepared('INSERT OR REPLACE INTO deferred_indexes (name, collection, sql) VALUES (?, ?, ?)').run(name, spec.name, sql);
            this.deferred.add(spec.name);
          } else if (!this.prepared('SELECT 1 FROM deferred_indexes WHERE name = ?').get(name)) {
            this.db.exec(sql);
          }
        });
      }
    });
    this.forgetStatements();
  }

  async buildDeferredIndexes(collections: readonly string[]): Promise<void> {
    for (const collection of collections) this.buildIndexesOf(collection);
  }

  /**
   * Before a query: the indexes it may use are built first. If that fails (a full disk), the
   * query still answers, by a scan, and the next one tries again.
   */
  private indexesBeforeQuery(collection: string): void {
    try {
      this.buildIndexesOf(collection);
    } catch {
      // Still deferred: answered without them.
    }
  }

  /** Builds a collection's deferred indexes, if it has any. */
  private buildIndexesOf(collection: string): void {
    if (!this.deferred.has(collection)) return;
    this.write(() => {
      const rows = this.prepared('SELECT name, sql FROM deferred_indexes WHERE collection = ?').all(collection) as { name: string; sql: string }[];
      for (const { sql } of rows) this.db.exec(sql);
      this.prepared('DELETE FROM deferred_indexes WHERE collection = ?').run(collection);
    });
    this.deferred.delete(collection);
    this.forgetStatements();
  }

  async get<D extends Document>(collection: string, id: string): Promise<D | null> {
    return (await this.getStored<D>(collection, id))?.document ?? null;
  }

  async getMany<D extends Document>(collection: string, ids: readonly string[]): Promise<D[]> {
    return (await this.getStoredMany<D>(collection, ids)).map((s) => s.document);
  }

  async getStored<D extends Document>(collection: string, id: string): Promise<StoredDocument<D> | null> {
    this.recover();
    const pointers = this.pointers(collection);
    if (pointers) return (pointers.getMany([id])[0] as StoredDocument<D> | undefined) ?? null;
    return this.storedDocument<D>(collection, this.layout(collection), id);
  }

  private storedDocument<D extends Document>(collection: string, layout: CollectionLayout, id: string): StoredDocument<D> | null {
    const key = layout.keyOf(id);
    if (!key) return null;
    const row = this.prepared(`SELECT ${layout.selected}, position FROM "${table(collection)}" WHERE ${keyCondition(layout)}`).get(...key) as Row | undefined;
    return row ? { document: layout.document(row) as D, position: layout.positions.position(row.position) } : null;
  }

  async getStoredMany<D extends Document>(collection: string, ids: readonly string[]): Promise<StoredDocument<D>[]> {
    if (ids.length === 0) return [];
    this.recover();
    const pointers = this.pointers(collection);
    if (pointers) return pointers.getMany(ids) as StoredDocument<D>[];
    const layout = this.layout(collection);
    if (layout.key) {
      // Each by its key: one lookup of the key's index per id, as `WHERE id IN (…)` makes.
      const found: StoredDocument<D>[] = [];
      for (const id of ids) {
        const stored = this.storedDocument<D>(collection, layout, id);
        if (stored) found.push(stored);
      }
      return found;
    }
    const rows = this.prepared(
      `SELECT ${layout.selected}, position FROM "${table(collection)}" WHERE id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(ids)) as Row[];
    return rows.map((r) => ({ document: layout.document(r) as D, position: layout.positions.position(r.position) }));
  }

  async find<D extends Document>(collection: string, query: Query = {}): Promise<D[]> {
    return (await this.findStored<D>(collection, query)).map((s) => s.document);
  }

  async count(collection: string, where: Query['where'] = {}): Promise<number> {
    this.recover();
    const pointers = this.pointers(collection);
    if (pointers) return pointers.count(where);
    this.indexesBeforeQuery(collection);
    const { clauses, params } = whereClause(where, this.layout(collection).fieldOf);
    const sql = `SELECT COUNT(*) AS n FROM "${table(collection)}"` + (clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '');
    return (this.prepared(sql).get(...params) as { n: number }).n;
  }

  async searchText<D extends Document>(collection: string, search: TextSearch): Promise<TextMatch<D>[]> {
    this.recover();
    this.indexesBeforeQuery(collection);
    return searchTextCollection<D>((sql) => this.prepared(sql), collection, search, this.layout(collection));
  }

  async findStored<D extends Document>(collection: string, query: Query = {}): Promise<StoredDocument<D>[]> {
    this.recover();
    const pointers = this.pointers(collection);
    if (pointers) return pointers.find(query) as StoredDocument<D>[];
    this.indexesBeforeQuery(collection);
    const layout = this.layout(collection);
    const { clauses, params } = whereClause(query.where, layout.fieldOf);
    const order = orderTerms(query.sort, layout.fieldOf);
    const sql =
      `SELECT ${layout.selected}, position FROM "${table(collection)}"` +
      (clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '') +
      (order.length ? ` ORDER BY ${order.join(', ')}` : '') +
      ` LIMIT CAST(? AS INTEGER)`;
    const rows = this.prepared(sql).all(...params, query.limit ?? -1) as Row[];
    return rows.map((r) => ({ document: layout.document(r) as D, position: layout.positions.position(r.position) }));
  }

  async applyBatch(
    changes: readonly DocumentChange[],
    checkpoints: Readonly<Record<string, LogPosition>>,
    fences: readonly LeaseFence[] = [],
  ): Promise<void> {
    const marks = Object.entries(checkpoints);
    if (changes.length === 0 && marks.length === 0 && fences.length === 0) return;
    try {
      // The fences are read under the write lock (IMMEDIATE), and acquireLease writes under
      // the same lock, so no lease can change hands between the check and the commit.
      this.write(() => {
        this.leaseTable.checkFences(fences, this.clock());
        for (const pointers of this.pointerTables.values()) pointers?.startBatch();
        for (const change of changes) {
          const pointers = this.pointers(change.collection);
          if (pointers) {
            if (change.kind === 'put') pointers.put(change.document as LogPointer, change.position);
            else pointers.remove(change.id);
            continue;
          }
          const writer = this.writer(change.collection);
          if (change.kind === 'put') writer.put.run(...writer.layout.values(change.document), writer.layout.positions.stored(change.position));
          else {
            const key = writer.layout.keyOf(change.id);
            if (key) writer.remove.run(...key);
          }
        }
        if (marks.length) this.checkpointWriter(marks.length).run(marks.flat());
      });
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      throw new ReadModelWriteError(`The batch was not applied: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * One statement for a batch's checkpoints (a row each, only ever moving forward), prepared once
   * per count: a batch moves every projection's checkpoint, and one statement of twenty rows costs
   * about half of twenty statements of one.
   */
  private checkpointWriter(count: number): Database.Statement {
    return this.prepared(
      `INSERT INTO checkpoints (name, position) VALUES ${Array(count).fill('(?, ?)').join(', ')}
       ON CONFLICT(name) DO UPDATE SET position = excluded.position WHERE excluded.position > checkpoints.position`,
    );
  }

  async getCheckpoint(projection: string): Promise<LogPosition | null> {
    this.recover();
    const row = this.prepared('SELECT position FROM checkpoints WHERE name = ?').get(projection) as
      | { position: string }
      | undefined;
    return row?.position ?? null;
  }

  async getCheckpoints(projections: readonly string[]): Promise<Map<string, LogPosition>> {
    if (!projections.length) return new Map();
    this.recover();
    const rows = this.prepared('SELECT name, position FROM checkpoints WHERE name IN (SELECT value FROM json_each(?))').all(
      JSON.stringify(projections),
    ) as { name: string; position: string }[];
    return new Map(rows.map((r) => [r.name, r.position]));
  }

  async reset(collections: readonly string[], projections: readonly string[]): Promise<void> {
    this.write(() => {
      for (const c of collections) {
        this.db.exec(`DROP TABLE IF EXISTS "${textTable(c)}"`);
        this.db.exec(`DROP TABLE IF EXISTS "${namesTable(c)}"`);
        this.db.exec(`DROP TABLE IF EXISTS "${table(c)}"`);
        this.prepared('DELETE FROM deferred_indexes WHERE collection = ?').run(c);
      }
      for (const p of projections) this.prepared('DELETE FROM checkpoints WHERE name = ?').run(p);
    });
    for (const c of collections) this.deferred.delete(c);
    this.forgetStatements();
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leaseTable.acquire(name, owner, ttlMs);
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.db.open) this.leaseTable.release(name, owner);
  }

  async leases(names: readonly string[]): Promise<Map<string, StoredLease>> {
    return this.leaseTable.list(names);
  }

  async overwriteFreedSpace(): Promise<void> {
    await this.checkpointer?.truncate();
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}
