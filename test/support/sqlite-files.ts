import Database from 'better-sqlite3';

/** Every row of every table of a SQLite file, read without Parley (to show that nothing was written). */
export function contentsOf(file: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]));
  } finally {
    db.close();
  }
}

/** The schema version a SQLite file records (SQLite's `user_version`; 0 when none is). */
export function schemaVersionOf(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/** Records another schema version in a SQLite file, as a newer (or older) release would have. */
export function recordSchemaVersion(file: string, version: number): void {
  const db = new Database(file);
  try {
    db.pragma(`user_version = ${version}`);
  } finally {
    db.close();
  }
}

/** A SQLite file's schema version and schema (every table and index with its SQL), read without Parley. */
export function schemaOf(file: string): { version: number; schema: unknown[] } {
  const db = new Database(file, { readonly: true });
  try {
    return { version: db.pragma('user_version', { simple: true }) as number, schema: db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all() };
  } finally {
    db.close();
  }
}
