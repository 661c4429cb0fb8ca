import type Database from 'better-sqlite3';
import { CollectionSpec, Document } from '../../../shared/ports/read-model-store.port';
import { column, COLUMN_PREFIX, columnField, field, FieldOf } from './read-model-sql';
import { COMPACT_POSITIONS, PositionCodec, positionsOfColumn, TEXT_POSITIONS } from './stored-position';

/**
 * How one collection's table holds its documents, in SQL and back: each document as JSON in
 * `doc`, or (a collection declared with `columns`) each field in a column of its own. The table
 * says which it is (a `doc` column or not), so every process reading the file, whether or not it
 * declared the collection, reads it the same way.
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
}

const jsonLayout = (positions: PositionCodec): CollectionLayout => ({
  fieldOf: field,
  selected: 'doc',
  document: (row) => JSON.parse(row.doc as string) as Document,
  written: ['id', 'doc'],
  values: (document) => [document._id, JSON.stringify(document)],
  documents: true,
  positions,
});

/** Until its table exists, a collection reads as JSON documents (reads of it fail as they always did). */
export const JSON_LAYOUT: CollectionLayout = jsonLayout(TEXT_POSITIONS);
const COMPACT_JSON_LAYOUT = jsonLayout(COMPACT_POSITIONS);

/** The `position` column of a table made now. */
export const POSITION_COLUMN = `position ${COMPACT_POSITIONS.sqlType} NOT NULL`;

/** A column of a collection kept in columns: its field, and how its values are held. */
export interface LayoutColumn {
  readonly name: string;
  /** `value`: a string or a number as it is; `boolean`: 1 or 0; `json`: JSON text. */
  readonly type: 'value' | 'boolean' | 'json';
}

/** Each type's declared SQL type (what the table records of it: `layoutOfTable` reads it back). */
const SQL_TYPES: Record<LayoutColumn['type'], string> = { value: '', boolean: 'BOOLEAN', json: 'JSON TEXT' };

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
      return JSON.stringify(value);
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
      return JSON.parse(value as string);
  }
}

export function columnLayout(columns: readonly LayoutColumn[], positions: PositionCodec = COMPACT_POSITIONS): CollectionLayout {
  const names = columns.map((c) => column(c.name));
  const fields = columns.map((c) => c.name);
  const keys = columns.map((c) => COLUMN_PREFIX + c.name);
  return {
    documents: false,
    positions,
    fieldOf: columnField(fields),
    selected: ['id', ...names].join(', '),
    document(row) {
      const document: Record<string, unknown> = { _id: row.id };
      for (let i = 0; i < columns.length; i++) {
        const value = row[keys[i]];
        if (value !== null) document[fields[i]] = decode(columns[i], value);
      }
      return document as Document;
    },
    written: ['id', ...names],
    values(document) {
      const values: unknown[] = [document._id];
      let present = 1;
      for (const c of columns) {
        const value = document[c.name];
        if (value === undefined) {
          values.push(null);
          continue;
        }
        values.push(encode(c, value));
        present++;
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

/** The statement creating a collection's table: JSON documents, or its columns (a plain column has no declared type: a value keeps its own). */
export const createTableSql = (table: string, columns?: CollectionSpec['columns']): string =>
  columns
    ? `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, ${layoutColumns(columns).map(columnDefinition).join(', ')}, ${POSITION_COLUMN})`
    : `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, ${POSITION_COLUMN})`;

/** The columns of a table kept in columns, with their types, as the table declares them. */
export function columnsOfTable(info: readonly { name: string; type: string }[]): LayoutColumn[] {
  const typeOf = (declared: string): LayoutColumn['type'] =>
    (Object.entries(SQL_TYPES).find(([, sql]) => sql === declared.toUpperCase())?.[0] as LayoutColumn['type'] | undefined) ?? 'value';
  return info.filter((c) => c.name.startsWith(COLUMN_PREFIX)).map((c) => ({ name: c.name.slice(COLUMN_PREFIX.length), type: typeOf(c.type) }));
}

/** The layout of a table; null if there is no such table (yet). */
export function layoutOfTable(db: Database.Database, table: string): CollectionLayout | null {
  const info = db.prepare(`SELECT name, type FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid`).all(table) as { name: string; type: string }[];
  if (info.length === 0) return null;
  const positions = positionsOfColumn(info.find((c) => c.name === 'position')?.type ?? '');
  if (info.some((c) => c.name === 'doc')) return positions === COMPACT_POSITIONS ? COMPACT_JSON_LAYOUT : JSON_LAYOUT;
  return columnLayout(columnsOfTable(info), positions);
}
