import type Database from 'better-sqlite3';
import { openSqliteFile } from '../../shared/sqlite-file';
import { SchemaMigration } from '../../shared/sqlite-schema-versions';

/** How long a read waits, synchronously, on a lock (in WAL mode only recovery and checkpoints make readers wait). */
export const READ_BUSY_TIMEOUT_MS = 5000;

/**
 * Version 1: the events table, append-only. Its text is stored in the file as written here
 * (indentation included): kept as files before schema versions have it, so that every file
 * at version 1 holds the same schema, byte for byte.
 */
const VERSION_1 = `
      CREATE TABLE IF NOT EXISTS events (
        position    INTEGER PRIMARY KEY AUTOINCREMENT,
        stream      TEXT    NOT NULL,
        revision    INTEGER NOT NULL,
        event_id    TEXT    NOT NULL UNIQUE,
        type        TEXT    NOT NULL,
        data        TEXT    NOT NULL,
        metadata    TEXT    NOT NULL,
        recorded_at TEXT    NOT NULL,
        UNIQUE (stream, revision)
      );
      -- The log is append-only: nothing is ever updated or deleted in place.
      CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
      CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
    `;

/**
 * The event log's schema, version by version (`migrateSchema` applies them at open). Version 1
 * is also the schema of files written before versions were recorded (version 0).
 */
export const EVENT_LOG_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, description: 'the events table, append-only', up: (db) => db.exec(VERSION_1) },
];

/**
 * Opens the event log's file (private, created if absent) at the newest schema version (a newer
 * file is refused). The commit's own fsync is the store's, off the event loop (see
 * WalDurability). The log deletes nothing, but whatever SQLite frees (a dropped index, a
 * migration's table) is overwritten too. `maxPageCount` caps the file like a quota.
 */
export function openEventLogDatabase(file: string, options: { readonly maxPageCount?: number } = {}): Database.Database {
  return openSqliteFile(file, { migrations: EVENT_LOG_MIGRATIONS, busyTimeoutMs: READ_BUSY_TIMEOUT_MS, maxPageCount: options.maxPageCount });
}
