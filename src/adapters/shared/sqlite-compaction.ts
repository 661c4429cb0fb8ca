import type Database from 'better-sqlite3';

/** Empties the WAL into the file, failing when a reader keeps it from being truncated. */
export function truncateWal(db: Database.Database, file: string): void {
  const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  if (result?.busy) throw new Error(`${file}: another process is reading it, so its write-ahead log could not be emptied; stop it and run again`);
}

/**
 * Rewrites one of Parley's SQLite files (opened by `openSqliteFile`, in WAL mode) so that no
 * byte of what was removed or replaced in it is left: every page built anew from what is live
 * (VACUUM, with `secure_delete` on), the WAL copied back into the file and emptied before and
 * after (the WAL's frames are the pages' older copies). Each step is SQLite's own transaction
 * or checkpoint: a process killed meanwhile leaves the file as it was before the step or after.
 */
export function compactSqliteFile(db: Database.Database, file: string): void {
  db.pragma('secure_delete = ON');
  truncateWal(db, file);
  db.exec('VACUUM');
  truncateWal(db, file);
}
