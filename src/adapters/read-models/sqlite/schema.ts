import type Database from 'better-sqlite3';
import { openSqliteFile } from '../../shared/sqlite-file';
import { SchemaMigration } from '../../shared/sqlite-schema-versions';

/** Larger pages make the index B-trees shallower: a rebuild's inserts cost about a sixth less. */
const PAGE_SIZE = 8192;

/**
 * The read models' own tables, version by version (`migrateSchema` applies them at open); the
 * collections' tables (`rm_<name>`) are made by `ensureCollections`. Version 1 is the schema of
 * files written before versions were recorded.
 */
export const READ_MODEL_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    description: 'checkpoints, leases and deferred indexes',
    up: (db) =>
      db.exec(`
        CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS deferred_indexes (name TEXT PRIMARY KEY, collection TEXT NOT NULL, sql TEXT NOT NULL);
      `),
  },
  {
    // Nothing to change in the file: the version tells a release before it to refuse the file,
    // which it would misread (a JSON column's shorter form, written into its tables too).
    version: 2,
    description: 'JSON columns in their shorter form (parts opened by a one-byte mark, lists of words as words)',
    up: () => undefined,
  },
];

/** How long a read-model write waits for another connection's lock. */
export const BUSY_TIMEOUT_MS = 5_000;

export { IN_MEMORY } from '../../shared/sqlite-file';

/**
 * Opens the read models' file (private, created if absent; or `IN_MEMORY`) at the newest schema
 * version (a newer file is refused). Commits need not fsync: read models are rebuilt from the
 * log. A removed or replaced document's bytes are overwritten, not left in free space (the WAL's
 * older copies go with `overwriteFreedSpace`). `maxPageCount` caps the file like a quota.
 */
export function openReadModelDatabase(file: string, options: { readonly maxPageCount?: number } = {}): Database.Database {
  return openSqliteFile(file, { migrations: READ_MODEL_MIGRATIONS, busyTimeoutMs: BUSY_TIMEOUT_MS, pageSize: PAGE_SIZE, maxPageCount: options.maxPageCount });
}
