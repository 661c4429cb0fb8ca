import Database from 'better-sqlite3';
import { makePrivateDatabaseFile } from '../../shared/files/private-files';
import { WAL_SIZE_LIMIT_BYTES, WRITER_CHECKPOINT_PAGES } from './sqlite-wal-checkpointer';
import { migrateSchema, SchemaMigration } from './sqlite-schema-versions';

/** SQLite's name for a database in memory, gone when it is closed (its pragmas for files are harmless there). */
export const IN_MEMORY = ':memory:';

export interface SqliteFileOptions {
  /** The file's schema, version by version (see `migrateSchema`). */
  readonly migrations: readonly SchemaMigration[];
  /** How long a statement waits, synchronously, for another connection's lock. */
  readonly busyTimeoutMs: number;
  /** Only takes effect on a new file (before WAL is set); older files keep theirs. */
  readonly pageSize?: number;
  /** SQLite's `max_page_count`: caps the file like a quota. */
  readonly maxPageCount?: number;
}

/**
 * Opens one of Parley's SQLite files the way every one is opened: private (created 0600 if
 * absent; or `IN_MEMORY`), in WAL mode with `synchronous = NORMAL` (each store decides what it
 * fsyncs itself), freed space overwritten (deleting means gone: `secure_delete`), the WAL copied
 * by a thread of its own (WalCheckpointer; the writer's checkpoint only finishes it), and at the
 * newest version of its schema. A file that cannot be opened so (a newer schema) is closed and
 * the error thrown.
 */
export function openSqliteFile(file: string, options: SqliteFileOptions): Database.Database {
  if (file !== IN_MEMORY) makePrivateDatabaseFile(file);
  const db = new Database(file);
  try {
    if (options.pageSize !== undefined) db.pragma(`page_size = ${options.pageSize}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    db.pragma('secure_delete = ON');
    db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(options.maxPageCount)}`);
    migrateSchema(db, file, options.migrations);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
