import Database from 'better-sqlite3';
import { layoutOfTable } from '../../src/adapters/read-models/sqlite/collection-layout';
import { orderTerms, table, whereClause } from '../../src/adapters/read-models/sqlite/read-model-sql';
import { Query, ReadModelStore } from '../../src/shared/ports/read-model-store.port';

export interface NotedQuery {
  readonly kind: 'find' | 'count';
  readonly collection: string;
  readonly query: Query;
}

/** The store, with every `find` and `count` it is asked noted (all else its own): what a route's reads are. */
export function notingQueries(store: ReadModelStore): { store: ReadModelStore; queries: NotedQuery[] } {
  const queries: NotedQuery[] = [];
  const noting = new Proxy(store, {
    get: (target, property) => {
      if (property === 'find') {
        return (collection: string, query: Query = {}) => {
          queries.push({ kind: 'find', collection, query });
          return target.find(collection, query);
        };
      }
      if (property === 'count') {
        return (collection: string, where: Query['where']) => {
          queries.push({ kind: 'count', collection, query: { where } });
          return target.count(collection, where);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: noting, queries };
}

/**
 * How SQLite plans each noted query on the read models' file, as SqliteReadModelStore words
 * them (one line per query, its plan's steps joined by `; `): `SEARCH … USING INDEX` reads a
 * range of an index; `SCAN` or `USE TEMP B-TREE` would read or sort a whole table or index.
 */
export function sqlitePlans(file: string, queries: readonly NotedQuery[]): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return queries.map(({ kind, collection, query }) => {
      // The table's own layout (JSON documents or columns), as the store reads it.
      const layout = layoutOfTable(db, table(collection));
      if (!layout) throw new Error(`no table for the collection ${collection}`);
      const { clauses, params } = whereClause(query.where, layout.fieldOf);
      const where = clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '';
      const order = orderTerms(query.sort, layout.fieldOf);
      const sql =
        kind === 'count'
          ? `SELECT COUNT(*) FROM "${table(collection)}"${where}`
          : `SELECT ${layout.selected}, position FROM "${table(collection)}"${where}${order.length ? ` ORDER BY ${order.join(', ')}` : ''} LIMIT ${query.limit ?? -1}`;
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail).join('; ');
    });
  } finally {
    db.close();
  }
}
