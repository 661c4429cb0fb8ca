import type Database from 'better-sqlite3';

/** One step of a file's schema: brings a file at `version - 1` to `version`. */
export interface SchemaMigration {
  readonly version: number;
  /** What the step changes, in a few words (for a reader of the list). */
  readonly description: string;
  /** Runs inside the migration's transaction: a step that throws leaves nothing of itself behind. */
  readonly up: (db: Database.Database) => void;
}

/** A file's schema version is newer than this code knows: a newer release wrote it. */
export class NewerSchemaVersionError extends Error {
  constructor(
    readonly file: string,
    readonly found: number,
    readonly newest: number,
  ) {
    super(
      `${file} has schema version ${found}, newer than this Parley knows (up to version ${newest}): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    this.name = 'NewerSchemaVersionError';
  }
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
 * is only read. A newer file is refused (NewerSchemaVersionError), unchanged.
 */
export function migrateSchema(db: Database.Database, file: string, migrations: readonly SchemaMigration[]): SchemaVersions {
  const newest = newestVersion(migrations);
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
  const version = Number(db.pragma('user_version', { simple: true }));
  if (version > newest) throw new NewerSchemaVersionError(file, version, newest);
  if (version < 0) throw new Error(`${file} has schema version ${version}, which no release of Parley writes: it is not a file Parley wrote`);
  return version;
}

/** The list's last version; the list must number its steps 1, 2, 3… (a programming error otherwise). */
function newestVersion(migrations: readonly SchemaMigration[]): number {
  migrations.forEach((step, i) => {
    if (step.version !== i + 1) throw new Error(`schema migrations must be numbered 1, 2, 3…: step ${i + 1} says ${step.version}`);
  });
  return migrations.length;
}
