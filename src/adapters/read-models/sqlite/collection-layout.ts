import type Database from 'better-sqlite3';
import { CollectionSpec, Document } from '../../../shared/ports/read-model-store.port';
import { documentId, documentIdParts } from '../../../shared/domain/streams';
import { column, COLUMN_PREFIX, columnField, field, FieldOf } from './read-model-sql';
import { COMPACT_POSITIONS, PositionCodec, positionsOfColumn, TEXT_POSITIONS } from './stored-position';

/**
 * How one collection's table holds its documents, in SQL and back: each document as JSON in
 * `doc`, or (a collection declared with `columns`) each field in a column of its own, its rows
 * found by their `id` column or (declared with a `key`) by the key's columns, the `_id` made
 * of them when read. The table says which it is (a `doc` column, an `id` column, the columns of
 * its primary key or unique constraint, each column's declared type), so every process reading
 * the file, whether or not it declared the collection, reads it the same way.
 */
export interface CollectionLayout {
  /** The fields in SQL (where, order, indexes). */
  readonly fieldOf: FieldOf;
  /** What a read selects (before `position`). */
  readonly selected: string;
  /** A document from a row of `selected`. */
  document(row: Record<string, unknown>): Document;
  /** The columns a write sets (before `position`). */
  readonly written: readonly string[];
  /** The values of `written` for a document. */
  values(document: Document): unknown[];
  /** Whether the table holds JSON documents (`doc`) rather than columns. */
  readonly documents: boolean;
  /** How its `position` column holds positions. */
  readonly positions: PositionCodec;
  /** The fields a row is keyed by (`_id` made of them), or null: its `id` column. */
  readonly key: readonly string[] | null;
  /** The columns a row is found by: `id`, or the key's. */
  readonly keyColumns: readonly string[];
  /** The values of `keyColumns` of the document `id`; null if no row can be it. */
  keyOf(id: string): unknown[] | null;
}

const BY_ID = ['id'];
const byId = (id: string): unknown[] => [id];

const jsonLayout = (positions: PositionCodec): CollectionLayout => ({
  fieldOf: field,
  selected: 'doc',
  document: (row) => JSON.parse(row.doc as string) as Document,
  written: ['id', 'doc'],
  values: (document) => [document._id, JSON.stringify(document)],
  documents: true,
  positions,
  key: null,
  keyColumns: BY_ID,
  keyOf: byId,
});

/** Until its table exists, a collection reads as JSON documents (reads of it fail as they always did). */
export const JSON_LAYOUT: CollectionLayout = jsonLayout(TEXT_POSITIONS);
const COMPACT_JSON_LAYOUT = jsonLayout(COMPACT_POSITIONS);

/** The `position` column of a table made now. */
export const POSITION_COLUMN = `position ${COMPACT_POSITIONS.sqlType} NOT NULL`;

/** A column of a collection kept in columns: its field, and how its values are held. */
export interface LayoutColumn {
  readonly name: string;
  /**
   * `value`: a string or a number as it is; `boolean`: 1 or 0; `json`: JSON text; `integer`: a
   * whole number; `time`: an ISO time as its milliseconds since 1970 (`storedTime`), any other string as it is;
   * `words`: an array of words, separated by spaces.
   */
  readonly type: 'value' | 'boolean' | 'json' | 'integer' | 'time' | 'words';
  /** Made by SQLite of other columns (a text collection's facets, `text-search.ts`): read, never written. */
  readonly generated?: boolean;
}

/**
 * Each type's declared SQL type (what the table records of it: `layoutOfTable` reads it back).
 * A time's declares BLOB affinity, so SQLite keeps a number or a string as it was bound (with
 * NUMERIC affinity a string of digits would become a number).
 */
export const SQL_TYPES: Record<LayoutColumn['type'], string> = {
  value: '',
  boolean: 'BOOLEAN',
  json: 'JSON TEXT',
  integer: 'INTEGER',
  time: 'TIME BLOB',
  words: 'WORDS TEXT',
};

/** A collection spec's columns as the layout holds them. */
export const layoutColumns = (columns: CollectionSpec['columns'] = []): LayoutColumn[] =>
  columns.map((c) => (typeof c === 'string' ? { name: c, type: 'value' } : c));

/** A column's definition in CREATE TABLE. */
export const columnDefinition = (c: LayoutColumn): string => (c.type === 'value' ? column(c.name) : `${column(c.name)} ${SQL_TYPES[c.type]}`);

const describe = (value: unknown): string => (value === null ? 'null' : typeof value);

/**
 * better-sqlite3 binds every JavaScript number as a REAL, which a column without a declared type
 * keeps in 8 bytes; bound as a BigInt a whole number is an INTEGER, kept in 0 to 8 bytes by its
 * size (0 and 1 in none), and read back as the same number.
 */
const sqlNumber = (value: number): number | bigint => (Number.isSafeInteger(value) ? BigInt(value) : value);
const TRUE = sqlNumber(1);
const FALSE = sqlNumber(0);

/**
 * Times kept as numbers: the strings `toISOString` writes of the years 1970 to 9999, which read
 * back from the number as the same string, in SQL too (`timeText`), and which order as their
 * numbers do. A string of any other shape (no milliseconds, an offset) is kept as it is.
 */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
function storedTime(c: LayoutColumn, value: unknown): unknown {
  if (typeof value !== 'string') throw new Error(`The field ${c.name} of a collection kept in columns holds a ${describe(value)}, not a time`);
  const ms = Date.parse(value);
  return ms >= 0 && ms <= LATEST_TIME && new Date(ms).toISOString() === value ? BigInt(ms) : value;
}

/** A time column in SQL as the string it holds (what conditions and sorts compare, as they did the text). */
const timeText = (sql: string): string => `(CASE typeof(${sql}) WHEN 'integer' THEN strftime('%Y-%m-%dT%H:%M:%fZ', ${sql} / 1000.0, 'unixepoch') ELSE ${sql} END)`;

/**
 * JSON values kept shorter: a value's text beginning with one of these is kept as the mark
 * (a control character, which no JSON text begins with) and the rest; an array of words (letters
 * and digits: a text index's facets) as the mark and the words separated by spaces. Decoding
 * looks at the first character alone, so a value kept whole (by an earlier release too) reads as
 * it did. The list is only ever appended to: rows hold its marks.
 */
const JSON_PREFIXES: readonly string[] = ['[{"type":"text/plain","content":'];
const WORDS_MARK = '\u0010';
const PREFIX_MARK = (i: number): string => String.fromCharCode(1 + i);
const WORD = /^[\p{L}\p{N}]+$/u;

function packedJson(value: unknown): string {
  if (Array.isArray(value) && value.length > 0 && value.every((w) => typeof w === 'string' && WORD.test(w))) return WORDS_MARK + value.join(' ');
  const text = JSON.stringify(value);
  for (let i = 0; i < JSON_PREFIXES.length; i++) if (text.startsWith(JSON_PREFIXES[i])) return PREFIX_MARK(i) + text.slice(JSON_PREFIXES[i].length);
  return text;
}

function unpackedJson(text: string): unknown {
  const mark = text.charCodeAt(0);
  if (mark === WORDS_MARK.charCodeAt(0)) return text.slice(1).split(' ');
  if (mark >= 1 && mark <= JSON_PREFIXES.length) return JSON.parse(JSON_PREFIXES[mark - 1] + text.slice(1));
  return JSON.parse(text);
}

/** A field's value as its column holds it. */
function encode(c: LayoutColumn, value: unknown): unknown {
  switch (c.type) {
    case 'value':
      if (typeof value === 'string') return value;
      if (typeof value === 'number') return sqlNumber(value);
      throw new Error(`The field ${c.name} of a collection kept in columns holds a ${describe(value)}, not a string or a number`);
    case 'boolean':
      if (typeof value === 'boolean') return value ? TRUE : FALSE;
      throw new Error(`The field ${c.name} of a collection kept in columns holds a ${describe(value)}, not a boolean`);
    case 'json':
      return packedJson(value);
    case 'integer':
      if (Number.isSafeInteger(value)) return BigInt(value as number);
      throw new Error(`The field ${c.name} of a collection kept in columns holds a ${describe(value)}, not a whole number`);
    case 'time':
      return storedTime(c, value);
    case 'words':
      throw new Error(`The field ${c.name} of a collection kept in columns is made of its other fields, not written`);
  }
}

/** A column's value as the document's field. */
function decode(c: LayoutColumn, value: unknown): unknown {
  switch (c.type) {
    case 'value':
      return value;
    case 'boolean':
      return value === 1;
    case 'json':
      return unpackedJson(value as string);
    case 'integer':
      return value;
    case 'time':
      return typeof value === 'number' ? new Date(value).toISOString() : value;
    case 'words':
      return value === '' ? [] : (value as string).split(' ');
  }
}

/** A key's part of an `_id` as its column holds it: an integer column's number in decimal; null if it cannot be one. */
const INTEGER_TEXT = /^-?(0|[1-9][0-9]*)$/;
function keyPart(c: LayoutColumn, part: unknown): unknown {
  if (typeof part !== 'string') return null;
  if (c.type !== 'integer') return part;
  return INTEGER_TEXT.test(part) && Number.isSafeInteger(Number(part)) ? BigInt(part) : null;
}

/** The fields of a collection kept in columns, a time as the string it holds. */
function fieldsOf(columns: readonly LayoutColumn[], key: readonly string[] | null): FieldOf {
  const plain = columnField(columns.map((c) => c.name));
  const times = new Set(columns.filter((c) => c.type === 'time').map((c) => c.name));
  return (name) => {
    if (name === '_id' && key) throw new Error(`A collection keyed by ${key.join(', ')} is queried by those fields, not by _id`);
    return times.has(name) ? timeText(plain(name)) : plain(name);
  };
}

/**
 * A collection kept in columns: found by its `id` column or, with `key` (fields among the
 * columns), by theirs, the `_id` made of them (`documentId`).
 */
export function columnLayout(columns: readonly LayoutColumn[], positions: PositionCodec = COMPACT_POSITIONS, key: readonly string[] | null = null): CollectionLayout {
  const names = columns.map((c) => column(c.name));
  const fields = columns.map((c) => c.name);
  const keys = columns.map((c) => COLUMN_PREFIX + c.name);
  const stored = columns.filter((c) => !c.generated);
  const storedNames = stored.map((c) => column(c.name));
  /** The fields a document may give that are made, not written (its facets, as the table makes them). */
  const made = columns.filter((c) => c.generated).map((c) => c.name);
  const keyed = key ? key.map((name) => columns.findIndex((c) => c.name === name)) : [];
  if (keyed.some((i) => i < 0)) throw new Error(`A key field is not among the collection's columns: ${key!.join(', ')}`);
  for (const i of keyed) {
    if (columns[i].type !== 'value' && columns[i].type !== 'integer') throw new Error(`The key field ${fields[i]} holds a ${columns[i].type}, not a string or an integer`);
  }
  /** The `_id` of a row or document: its key's values, each as a string. */
  const idOf = (valueAt: (i: number) => unknown): string => documentId(...keyed.map((i) => String(valueAt(i))));
  return {
    documents: false,
    positions,
    key,
    keyColumns: key ? keyed.map((i) => names[i]) : BY_ID,
    keyOf: key
      ? (id) => {
          let parts: unknown;
          try {
            parts = documentIdParts(id);
          } catch {
            return null;
          }
          if (!Array.isArray(parts) || parts.length !== keyed.length) return null;
          const values = keyed.map((i, k) => keyPart(columns[i], parts[k]));
          return values.includes(null) ? null : values;
        }
      : byId,
    fieldOf: fieldsOf(columns, key),
    selected: (key ? names : ['id', ...names]).join(', '),
    document(row) {
      const document: Record<string, unknown> = { _id: key ? idOf((i) => row[keys[i]]) : row.id };
      for (let i = 0; i < columns.length; i++) {
        const value = row[keys[i]];
        if (value !== null) document[fields[i]] = decode(columns[i], value);
      }
      return document as Document;
    },
    written: key ? storedNames : ['id', ...storedNames],
    values(document) {
      const values: unknown[] = key ? [] : [document._id];
      let present = 1;
      for (const name of made) if (document[name] !== undefined) present++;
      for (const c of stored) {
        const value = document[c.name];
        if (value === undefined) {
          values.push(null);
          continue;
        }
        values.push(encode(c, value));
        present++;
      }
      if (key) {
        // Read back by its key, the document must be found under its `_id`: a key's string fields hold strings.
        for (const i of keyed) {
          if (columns[i].type === 'value' && typeof document[fields[i]] !== 'string') {
            throw new Error(`The key field ${fields[i]} of a collection kept in columns holds a ${describe(document[fields[i]])}, not a string`);
          }
        }
        const id = idOf((i) => document[fields[i]]);
        if (id !== document._id) throw new Error(`The document ${document._id} is not keyed by its fields ${key.join(', ')} (${id})`);
      }
      // Counted without listing the keys: this runs once per row a rebuild writes. A field set
      // to undefined is absent, as JSON.stringify leaves it out.
      let given = 0;
      for (const name in document) if (Object.hasOwn(document, name) && document[name] !== undefined) given++;
      if (given !== present) {
        const extra = Object.keys(document).filter((name) => name !== '_id' && !fields.includes(name) && document[name] !== undefined);
        throw new Error(`Fields not among the collection's columns: ${extra.join(', ')}`);
      }
      return values;
    },
  };
}

/**
 * The statement creating a collection's table: JSON documents, or its columns (a plain column has
 * no declared type: a value keeps its own), keyed by `id` or (with a key) unique by the key's
 * columns, with no id kept besides. (Not `WITHOUT ROWID`, which saves the key's index: every other
 * index then refers to a row by its key, and SQLite plans a room's page of hidden messages as a
 * walk of the whole room by the key rather than through the index of `visible`.)
 */
export function createTableSql(table: string, columns?: CollectionSpec['columns'], key?: CollectionSpec['key']): string {
  // A key is of columns: documents kept as JSON are found by their id.
  if (!columns) return `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, ${POSITION_COLUMN})`;
  const definitions = layoutColumns(columns).map(columnDefinition).join(', ');
  return key
    ? `CREATE TABLE "${table}" (${definitions}, ${POSITION_COLUMN}, UNIQUE (${key.map(column).join(', ')}))`
    : `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, ${definitions}, ${POSITION_COLUMN})`;
}

/** The columns of a table kept in columns, with their types, as the table declares them. */
export function columnsOfTable(info: readonly { name: string; type: string; hidden: number }[]): LayoutColumn[] {
  const typeOf = (declared: string): LayoutColumn['type'] =>
    (Object.entries(SQL_TYPES).find(([, sql]) => sql === declared.toUpperCase())?.[0] as LayoutColumn['type'] | undefined) ?? 'value';
  return info
    .filter((c) => c.name.startsWith(COLUMN_PREFIX))
    .map((c) => ({ name: c.name.slice(COLUMN_PREFIX.length), type: typeOf(c.type), ...(c.hidden !== 0 && { generated: true }) }));
}

/** The layout of a table; null if there is no such table (yet). */
export function layoutOfTable(db: Database.Database, table: string): CollectionLayout | null {
  // Generated columns too (hidden 2 and 3; 1 is a virtual table's).
  const info = db.prepare(`SELECT name, type, hidden FROM pragma_table_xinfo(?) WHERE hidden != 1 ORDER BY cid`).all(table) as { name: string; type: string; hidden: number }[];
  if (info.length === 0) return null;
  const positions = positionsOfColumn(info.find((c) => c.name === 'position')?.type ?? '');
  if (info.some((c) => c.name === 'doc')) return positions === COMPACT_POSITIONS ? COMPACT_JSON_LAYOUT : JSON_LAYOUT;
  return columnLayout(columnsOfTable(info), positions, info.some((c) => c.name === 'id') ? null : keyOfTable(db, table));
}

/** The fields a table without an `id` column is keyed by: the columns of its unique constraint (or of a primary key that is not the rowid). */
function keyOfTable(db: Database.Database, table: string): string[] {
  const index = db.prepare(`SELECT name FROM pragma_index_list(?) WHERE origin IN ('pk', 'u') ORDER BY origin = 'u'`).get(table) as { name: string } | undefined;
  if (!index) throw new Error(`The table ${table} has neither an id column nor a key`);
  const names = db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(index.name) as { name: string }[];
  return names.map((c) => c.name.slice(COLUMN_PREFIX.length));
}
