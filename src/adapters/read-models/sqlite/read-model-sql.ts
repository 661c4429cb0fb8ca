import { Condition, IndexSpec, Query, Scalar } from '../../../shared/ports/read-model-store.port';

/**
 * The port's collections, fields, queries and indexes as SQLite SQL: each collection a table
 * `rm_<name>` of `(id, doc JSON, position)`, each field a `json_extract` of `doc`. Names are
 * checked before they are written into SQL; values always travel as parameters.
 */

const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The table holding a collection's documents. */
export const table = (collection: string): string => {
  if (!NAME.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
  return `rm_${collection}`;
};

/** A document field as an SQL expression. */
export const field = (name: string): string => {
  if (!FIELD.test(name)) throw new Error(`Invalid field name: ${name}`);
  return `json_extract(doc, '$.${name}')`;
};

/** SQLite's JSON functions read booleans as 1/0. */
const bind = (v: Scalar): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A query's conditions as SQL clauses (to be ANDed) and their parameters, in order. */
export function whereClause(where: Query['where'] = {}): { clauses: string[]; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [name, condition] of Object.entries(where)) addCondition(clauses, params, field(name), condition);
  return { clauses, params };
}

function addCondition(clauses: string[], params: unknown[], expr: string, condition: Condition): void {
  if (condition === null) {
    clauses.push(`${expr} IS NULL`);
  } else if (typeof condition !== 'object') {
    clauses.push(`${expr} = ?`);
    params.push(bind(condition));
  } else if ('in' in condition) {
    // `x IN (…, NULL)` never matches in SQL; a listed null means "null or missing", as in equality.
    const values = condition.in.filter((v) => v !== null);
    const match = `${expr} IN (SELECT value FROM json_each(?))`;
    clauses.push(values.length < condition.in.length ? `(${match} OR ${expr} IS NULL)` : match);
    params.push(JSON.stringify(values.map(bind)));
  } else {
    const ops: [keyof typeof condition, string][] = [
      ['gt', '>'],
      ['gte', '>='],
      ['lt', '<'],
      ['lte', '<='],
    ];
    for (const [key, op] of ops) {
      if (condition[key] !== undefined) {
        clauses.push(`${expr} ${op} ?`);
        params.push(bind(condition[key] as Scalar));
      }
    }
  }
}

/** A query's sort as the terms of an ORDER BY. */
export const orderTerms = (sort: Query['sort'] = []): string[] => sort.map((s) => `${field(s.field)} ${s.descending ? 'DESC' : 'ASC'}`);

/** A declared index of a collection: its name, and the statement that creates it if absent. */
export function indexDefinition(collection: string, index: IndexSpec): { name: string; sql: string } {
  const parts = index.fields.map((f) => (typeof f === 'string' ? field(f) : `${field(f.field)} DESC`));
  const name = `ix_${collection}_${index.fields.map((f) => (typeof f === 'string' ? f : `${f.field}_desc`)).join('_')}`;
  const sql = `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${name}" ON "${table(collection)}" (${parts.join(', ')})`;
  return { name, sql };
}
