import type Database from 'better-sqlite3';
import { Document } from '../../../shared/ports/read-model-store.port';
import { column, COLUMN_PREFIX, columnField, field, FieldOf } from './read-model-sql';

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
}

/** Until its table exists, a collection reads as JSON documents (reads of it fail as they always did). */
export const JSON_LAYOUT: CollectionLayout = {
  fieldOf: field,
  selected: 'doc',
  document: (row) => JSON.parse(row.doc as string) as Document,
  written: ['id', 'doc'],
  values: (document) => [document._id, JSON.stringify(document)],
};

function columnLayout(columns: readonly string[]): CollectionLayout {
  const names = columns.map(column);
  return {
    fieldOf: columnField(columns),
    selected: ['id', ...names].join(', '),
    document(row) {
      const document: Record<string, unknown> = { _id: row.id };
      for (const name of columns) {
        const value = row[COLUMN_PREFIX + name];
        if (value !== null) document[name] = value;
      }
      return document as Document;
    },
    written: ['id', ...names],
    values(document) {
      const values: unknown[] = [document._id];
      let present = 1;
      for (const name of columns) {
        const value = document[name];
        if (value === undefined) {
          values.push(null);
          continue;
        }
        if (typeof value !== 'string' && typeof value !== 'number') {
          throw new Error(`The field ${name} of a collection kept in columns holds a ${value === null ? 'null' : typeof value}, not a string or a number`);
        }
        values.push(value);
        present++;
      }
      // Counted without listing the keys: this runs once per row a rebuild writes.
      let fields = 0;
      for (const name in document) if (Object.hasOwn(document, name)) fields++;
      if (fields !== present) {
        const extra = Object.keys(document).filter((name) => name !== '_id' && !columns.includes(name));
        throw new Error(`Fields not among the collection's columns: ${extra.join(', ')}`);
      }
      return values;
    },
  };
}

/** The statement creating a collection's table: JSON documents, or its columns (no declared type: a value keeps its own). */
export const createTableSql = (table: string, columns?: readonly string[]): string =>
  columns
    ? `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, ${columns.map(column).join(', ')}, position TEXT NOT NULL)`
    : `CREATE TABLE "${table}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, position TEXT NOT NULL)`;

/** The layout of a table; null if there is no such table (yet). */
export function layoutOfTable(db: Database.Database, table: string): CollectionLayout | null {
  const names = (db.prepare(`SELECT name FROM pragma_table_info(?) ORDER BY cid`).all(table) as { name: string }[]).map((r) => r.name);
  if (names.length === 0) return null;
  if (names.includes('doc')) return JSON_LAYOUT;
  return columnLayout(names.filter((name) => name.startsWith(COLUMN_PREFIX)).map((name) => name.slice(COLUMN_PREFIX.length)));
}
