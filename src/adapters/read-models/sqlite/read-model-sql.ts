import { Condition, IndexSpec, Query, Scalar } from '../../../shared/ports/read-model-store.port';

/**
 * The port's collections, fields, queries and indexes as SQLite SQL: each collection a table
 * `rm_<name>` of `(id, doc JSON, position)`, each field a `json_extract` of `doc`; or, for a
 * collection declared with `columns`, of `(id, <one column per field>, position)`, each field
 * its column. Names are checked before they are written into SQL; values always travel as
 * parameters.
 */

const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The table holding a collection's documents. */
export const table = (collection: string): string => {
  if (!NAME.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
  return `rm_${collection}`;
};

/** How a collection's fields are written in SQL: a field's name to an expression. */
export type FieldOf = (name: string) => string;

const checkedField = (name: string): string => {
  if (!FIELD.test(name)) throw new Error(`Invalid field name: ${name}`);
  return name;
};

/** A document field as an SQL expression. */
export const field: FieldOf = (name) => `json_extract(doc, '$.${checkedField(name)}')`;

/**
 * A field's column in a collection kept in columns (`_id` is the key column `id`): prefixed, so
 * that no field (a `position` of its own) meets the store's own columns.
 */
export const column = (name: string): string => (name === '_id' ? 'id' : `"${COLUMN_PREFIX}${checkedField(name)}"`);
export const COLUMN_PREFIX = 'f_';

/** The fields of a collection kept in columns: each its column; a field it does not have is an error, not a silent NULL. */
export const columnField = (columns: readonly string[]): FieldOf => (name) => {
  if (name !== '_id' && !columns.includes(name)) throw new Error(`Unknown field ${name} of a collection kept in columns (${columns.join(', ')})`);
  return column(name);
};

/** SQLite's JSON functions read booleans as 1/0. */
const bind = (v: Scalar): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A query's conditions as SQL clauses (to be ANDed) and their parameters, in order. */
export function whereClause(where: Query['where'] = {}, fieldOf: FieldOf = field): { clauses: string[]; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [name, condition] of Object.entries(where)) addCondition(clauses, params, fieldOf(name), condition);
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
export const orderTerms = (sort: Query['sort'] = [], fieldOf: FieldOf = field): string[] =>
  sort.map((s) => `${fieldOf(s.field)} ${s.descending ? 'DESC' : 'ASC'}`);

/** A declared index of a collection: its name, and the statement that creates it if absent. */
export function indexDefinition(collection: string, index: IndexSpec, fieldOf: FieldOf = field): { name: string; sql: string } {
  const parts = index.fields.map((f) => (typeof f === 'string' ? fieldOf(f) : `${fieldOf(f.field)} DESC`));
  const name = `ix_${collection}_${index.fields.map((f) => (typeof f === 'string' ? f : `${f.field}_desc`)).join('_')}`;
  const sql = `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${name}" ON "${table(collection)}" (${parts.join(', ')})`;
  return { name, sql };
}

/**
 * The put of a collection's row: inserted, or replaced only by a later position (a redelivered
 * event changes nothing). `columns` end with `position`; `key` are those a row is found by (`id`,
 * or a key's), which a replacement leaves as they are, as it does `kept` (a text collection's
 * rowid, which its index refers to).
 */
export const laterPositionPutSql = (t: string, columns: readonly string[], kept: readonly string[] = [], key: readonly string[] = ['id']): string =>
  `INSERT INTO "${t}" (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
   ON CONFLICT(${key.join(', ')}) DO UPDATE SET ${columns.filter((c) => !key.includes(c) && !kept.includes(c)).map((c) => `${c} = excluded.${c}`).join(', ')}
   WHERE excluded.position > "${t}".position`;
