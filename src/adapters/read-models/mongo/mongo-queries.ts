import type { CreateIndexesOptions, Filter, SortDirection } from 'mongodb';
import { CollectionSpec, Condition, Document, Query } from '../../../shared/ports/read-model-store.port';
import { LogPosition } from '../../../shared/domain/event';

/**
 * The port's collections, fields, queries and indexes as MongoDB names, filters and index
 * specifications, with the same naming rules and null semantics as the SQLite adapter, so a
 * projection valid on one is valid on both.
 */

/** A read-model document as stored: the document untouched under `doc`, beside its position. */
export interface Row {
  _id: string;
  doc: Document;
  position: LogPosition;
}

const NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Read models live in `rm_<name>`, apart from the `checkpoints` and `leases` collections. */
export const collectionName = (collection: string): string => {
  if (!NAME.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
  return `rm_${collection}`;
};

/** Queried fields address `doc.<field>`; `_id` is the row's own key (and its index). */
export const path = (field: string): string => {
  if (!FIELD.test(field)) throw new Error(`Invalid field name: ${field}`);
  return field === '_id' ? '_id' : `doc.${field}`;
};

export function toFilter(query: Query): Filter<Row> {
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

export const toSort = (sort: Query['sort'] = []): [string, SortDirection][] => sort.map((s) => [path(s.field), s.descending ? -1 : 1]);

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

/** A collection's declared indexes as MongoDB keys and options (named as in SQLite, less the collection). */
export function indexesOf(spec: CollectionSpec): { keys: Record<string, 1 | -1>; options: CreateIndexesOptions & { name: string } }[] {
  return (spec.indexes ?? []).map((index) => {
    const fields = index.fields.map((f) => (typeof f === 'string' ? { field: f, descending: false } : f));
    const keys: Record<string, 1 | -1> = {};
    for (const f of fields) keys[path(f.field)] = f.descending ? -1 : 1;
    return {
      keys,
      options: {
        name: `ix_${fields.map((f) => (f.descending ? `${f.field}_desc` : f.field)).join('_')}`,
        unique: index.unique ?? false,
        ...(index.unique ? { partialFilterExpression: holdingValues(fields.map((f) => path(f.field))) } : {}),
      },
    };
  });
}
