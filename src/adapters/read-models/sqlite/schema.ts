import Database from 'better-sqlite3';
import { makePrivateDatabaseFile } from '../../../shared/files/private-files';
import { WRITER_CHECKPOINT_PAGES } from '../../shared/sqlite-wal-checkpointer';
import { migrateSchema, SchemaMigration } from '../../shared/sqlite-schema-versions';

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
];

/** How long a read-model write waits for another connection's lock. */
export const BUSY_TIMEOUT_MS = 5_000;

/** SQLite's name for a database in memory, gone when it is closed (its pragmas for files are harmless there). */
export const IN_MEMORY = ':memory:';

/**
 * Opens the read models' file (private, created if absent; or `IN_MEMORY`) in WAL mode, at the
 * newest schema version (a newer file is refused, and closed). Commits need not fsync: read
 * models are rebuilt from the log. `maxPageCount` caps the file like a quota.
 */
export function openReadModelDatabase(file: string, options: { readonly maxPageCount?: number } = {}): Database.Database {
  if (file !== IN_MEMORY) makePrivateDatabaseFile(file);
  const db = new Database(file);
  try {
    // Only takes effect on a new file (before WAL is set); older files keep theirs.
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Deleting means gone: a removed or replaced document's bytes are overwritten with zeros,
    // not left in free space (the WAL's older copies go with `overwriteFreedSpace`).
    db.pragma('secure_delete = ON');
    // The WAL is copied on a thread of its own (WalCheckpointer); the writer's checkpoint only finishes it.
    db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(options.maxPageCount)}`);
    migrateSchema(db, file, READ_MODEL_MIGRATIONS);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
