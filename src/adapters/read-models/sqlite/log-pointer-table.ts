import type Database from 'better-sqlite3';
import { LogPosition } from '../../../shared/domain/event';
import { Condition, LogPointer, logPointerId, Query, Scalar, StoredDocument } from '../../../shared/ports/read-model-store.port';
import { orderTerms, table, whereClause } from './read-model-sql';
import { COMPACT_POSITIONS } from './stored-position';

/**
 * A collection of log pointers (`CollectionSpec.logPointers`, the audit index) in a layout of its
 * own: each line is four whole numbers, keyed by its key and position (WITHOUT ROWID: the key is
 * the table, so there is no rowid, no id and no index beside it), and the strings it repeats are
 * kept once in `<table>_names` and referred to by number: the key with its instance, and the
 * stream with the event's type (one pair, one number: a column less in every line). A short
 * message's two lines took 386 bytes as columns with a text id and two indexes; here under 40
 * (docs/benchmarks.md).
 *
 * A number is given to a pair the first time a batch writes it and never changes or goes (it
 * outlives its lines: the index only points, and a shredded event's pointers stay, as the v4
 * lines' strings did).
 * Numbers follow the order names were first written: an incremental build and a rebuild of the
 * same log give the same numbers, as long as one writer folds the collection (several partitions'
 * workers may interleave differently: the same documents, other numbers).
 */

/** The dictionary of a pointer collection's names: pairs of strings, a key's (its instance, the key) and an event's (its stream, its type). */
export const namesTable = (collection: string): string => `${table(collection)}_names`;

/** The column only a pointer collection's table has: how a process tells the layout from the file. */
const KEY_COLUMN = 'key_n';

export function createLogPointerTables(db: Database.Database, collection: string): void {
  db.exec(`
    CREATE TABLE "${namesTable(collection)}" (n INTEGER PRIMARY KEY, scope TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (scope, name));
    CREATE TABLE "${table(collection)}" (
      ${KEY_COLUMN} INTEGER NOT NULL, position BLOB NOT NULL, stream_type_n INTEGER NOT NULL, revision INTEGER NOT NULL,
      PRIMARY KEY (${KEY_COLUMN}, position)
    ) WITHOUT ROWID;
  `);
}

/** Whether the collection's table is a pointer collection's. */
export const isLogPointerTable = (db: Database.Database, collection: string): boolean =>
  db.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = ?`).get(table(collection), KEY_COLUMN) !== undefined;

/** The document's fields as the joined line and names hold them. */
const FIELDS: Readonly<Record<string, string>> = {
  instance_id: 'k.scope',
  key: 'k.name',
  position: 'l.position',
  stream: 'e.scope',
  revision: 'l.revision',
  type: 'e.name',
};

const fieldOf = (name: string): string => {
  const sql = FIELDS[name];
  if (!sql) throw new Error(`Unknown field ${name} of a collection of log pointers (${Object.keys(FIELDS).join(', ')})`);
  return sql;
};

/** A position as the column holds it, as a parameter (a JSON list of `in` cannot hold a BigInt). */
const storedPosition = (value: Scalar): Scalar => {
  if (typeof value !== 'string') return value;
  const stored = COMPACT_POSITIONS.stored(value);
  return typeof stored === 'bigint' ? Number(stored) : (stored as string);
};

const mapCondition = (condition: Condition, map: (value: Scalar) => Scalar): Condition => {
  if (condition === null || typeof condition !== 'object') return map(condition);
  if ('in' in condition) return { in: condition.in.map(map) };
  return Object.fromEntries(Object.entries(condition).map(([op, value]) => [op, value === undefined ? value : map(value as Scalar)]));
};

interface LineRow {
  instance_id: string;
  key: string;
  position: unknown;
  stream: string;
  revision: number;
  type: string;
}

const stored = (row: LineRow): StoredDocument<LogPointer> => {
  const position = COMPACT_POSITIONS.position(row.position);
  const document: LogPointer = {
    _id: logPointerId(row.instance_id, row.key, position),
    instance_id: row.instance_id,
    key: row.key,
    position,
    stream: row.stream,
    revision: row.revision,
    type: row.type,
  };
  return { document, position };
};

export class LogPointerTable {
  private readonly lines: string;
  private readonly names: string;
  private readonly select: string;
  /** The statements of every write, written once (the store prepares each once, found by its text). */
  private readonly insertSql: string;
  private readonly numberSql: string;
  private readonly newNumberSql: string;
  /** Names already numbered in this batch (see `startBatch`). */
  private readonly numbered = new Map<string, number>();

  constructor(
    private readonly prepared: (sql: string) => Database.Statement,
    collection: string,
  ) {
    this.lines = table(collection);
    this.names = namesTable(collection);
    this.select =
      `SELECT k.scope AS instance_id, k.name AS key, l.position AS position, e.scope AS stream, l.revision AS revision, e.name AS type ` +
      `FROM "${this.lines}" l JOIN "${this.names}" k ON k.n = l.${KEY_COLUMN} JOIN "${this.names}" e ON e.n = l.stream_type_n`;
    this.insertSql = `INSERT INTO "${this.lines}" (${KEY_COLUMN}, position, stream_type_n, revision) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`;
    this.numberSql = `SELECT n FROM "${this.names}" WHERE scope = ? AND name = ?`;
    this.newNumberSql = `INSERT INTO "${this.names}" (scope, name) VALUES (?, ?)`;
  }

  getMany(ids: readonly string[]): StoredDocument[] {
    const found: StoredDocument[] = [];
    const statement = this.prepared(`${this.select} WHERE k.scope = ? AND k.name = ? AND l.position = ?`);
    for (const id of ids) {
      const parts = parseId(id);
      if (!parts) continue;
      const row = statement.get(parts[0], parts[1], COMPACT_POSITIONS.stored(parts[2])) as LineRow | undefined;
      if (row) found.push(stored(row));
    }
    return found;
  }

  find(query: Query): StoredDocument[] {
    const { clauses, params } = this.conditions(query.where);
    const order = orderTerms(query.sort, fieldOf);
    const sql =
      this.select +
      (clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '') +
      (order.length ? ` ORDER BY ${order.join(', ')}` : '') +
      ` LIMIT CAST(? AS INTEGER)`;
    return (this.prepared(sql).all(...params, query.limit ?? -1) as LineRow[]).map(stored);
  }

  count(where: Query['where']): number {
    const { clauses, params } = this.conditions(where);
    const sql = `SELECT COUNT(*) AS n FROM (${this.select}${clauses.length ? ` WHERE ${clauses.join(' AND ')}` : ''})`;
    return (this.prepared(sql).get(...params) as { n: number }).n;
  }

  /** Names numbered by an earlier batch are looked up again: another connection may have dropped and remade the tables since. */
  startBatch(): void {
    this.numbered.clear();
  }

  /** Writes a line; one already there (the same name and position: a redelivered event) stays as it is. */
  put(document: LogPointer, position: LogPosition): void {
    const { instance_id, key, stream, revision, type } = document;
    if (document.position !== position) throw new Error(`A log pointer reflects its own position (${document.position}), not ${position}`);
    const extra = Object.keys(document).filter((f) => f !== '_id' && !(f in FIELDS));
    if (extra.length > 0) throw new Error(`Fields not among a log pointer's: ${extra.join(', ')}`);
    if (document._id !== logPointerId(instance_id, key, position)) throw new Error(`A log pointer's id is logPointerId(instance_id, key, position), not ${document._id}`);
    if (![instance_id, key, stream, type].every((v) => typeof v === 'string') || !Number.isSafeInteger(revision)) {
      throw new Error('A log pointer holds strings and a whole revision');
    }
    this.prepared(this.insertSql).run(
      this.number(instance_id, key),
      COMPACT_POSITIONS.stored(position),
      this.number(stream, type),
      revision,
    );
  }

  remove(id: string): void {
    const parts = parseId(id);
    if (!parts) return;
    this.prepared(
      `DELETE FROM "${this.lines}" WHERE ${KEY_COLUMN} = (SELECT n FROM "${this.names}" WHERE scope = ? AND name = ?) AND position = ?`,
    ).run(parts[0], parts[1], COMPACT_POSITIONS.stored(parts[2]));
  }

  private conditions(where: Query['where'] = {}): { clauses: string[]; params: unknown[] } {
    const mapped = where.position === undefined ? where : { ...where, position: mapCondition(where.position, storedPosition) };
    return whereClause(mapped, fieldOf);
  }

  /** The pair's number, given now if it has none. */
  private number(scope: string, name: string): number {
    const cacheKey = `${scope}\u0000${name}`;
    let n = this.numbered.get(cacheKey);
    if (n === undefined) {
      const row = this.prepared(this.numberSql).get(scope, name) as { n: number } | undefined;
      n = row ? row.n : Number(this.prepared(this.newNumberSql).run(scope, name).lastInsertRowid);
      this.numbered.set(cacheKey, n);
    }
    return n;
  }
}

/** `[instance_id, key, position]` from a pointer's id; null for an id no pointer has. */
function parseId(id: string): [string, string, string] | null {
  try {
    const parts: unknown = JSON.parse(id);
    if (Array.isArray(parts) && parts.length === 3 && parts.every((p) => typeof p === 'string')) return parts as [string, string, string];
  } catch {
    // Not a pointer's id.
  }
  return null;
}
