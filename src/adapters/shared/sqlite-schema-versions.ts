import type Database from 'better-sqlite3';
import { checkedVersion, newestVersion } from './stored-versions';

/** One step of a file's schema: brings a file at `version - 1` to `version`. */
export interface SchemaMigration {
  readonly version: number;
  /** What the step changes, in a few words (for a reader of the list). */
  readonly description: string;
  /** Runs inside the migration's transaction: a step that throws leaves nothing of itself behind. */
  readonly up: (db: Database.Database) => void;
}

/** What an open found and left: the version the file had and the one it has now. */
export interface SchemaVersions {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings an SQLite file to the newest version of its schema, at open. The version is SQLite's
 * `user_version` (in the file's header, written in the same transaction as the tables).
 *
 * Version 0 is a new, empty file or one written before versions were recorded, whose tables
 * are version 1's: version 1's step therefore creates what is missing and leaves what is there
 * (`CREATE … IF NOT EXISTS`). Every step to do runs, and the version is written, in one
 * IMMEDIATE transaction, so a failed step leaves the file as it was, and a second process
 * opening the same file at the same moment (a projector worker, the admin CLI) waits for the
 * lock, then finds the file migrated and runs nothing. A file already at the newest version
 * is only read. A newer file is refused (NewerVersionError), unchanged.
 */
export function migrateSchema(db: Database.Database, file: string, migrations: readonly SchemaMigration[]): SchemaVersions {
  const newest = newestVersion(migrations, 'schema');
  const found = versionOf(db, file, newest);
  if (found === newest) return { from: found, to: newest };
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated it meanwhile.
    const current = versionOf(db, file, newest);
    for (const step of migrations.slice(current)) {
      step.up(db);
      db.pragma(`user_version = ${step.version}`);
    }
  }).immediate();
  return { from: found, to: newest };
}

/** The file's recorded version, refused when it is one this code cannot have written. */
function versionOf(db: Database.Database, file: string, newest: number): number {
  return checkedVersion(file, 'schema', Number(db.pragma('user_version', { simple: true })), newest);
}
