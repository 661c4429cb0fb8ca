import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NewerVersionError } from '../../shared/stored-versions';
import { schemaOf } from '../../../../test/support/sqlite-files';
import { IN_MEMORY, openReadModelDatabase, READ_MODEL_MIGRATIONS } from './schema';

const NEWEST = READ_MODEL_MIGRATIONS[READ_MODEL_MIGRATIONS.length - 1].version;
import { SqliteReadModelStore } from './sqlite-read-model-store';

/**
 * read-models.sqlite records its schema version: a file from before versions were recorded
 * opens as version 1, unchanged (then moves to the newest, which changes no table), and a file from a newer release is refused.
 */

/** What Parley wrote into read-models.sqlite before schema versions (main e30e27a): its own tables, verbatim, and one collection. */
const BEFORE_VERSIONS = `
      CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS deferred_indexes (name TEXT PRIMARY KEY, collection TEXT NOT NULL, sql TEXT NOT NULL);
    `;

function writeBeforeVersions(file: string): void {
  const db = new Database(file);
  db.pragma('page_size = 8192');
  db.pragma('journal_mode = WAL');
  db.exec(BEFORE_VERSIONS);
  db.exec(`CREATE TABLE "rm_users_v1" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, position TEXT NOT NULL)`);
  db.exec(`CREATE INDEX IF NOT EXISTS "ix_users_v1_name" ON "rm_users_v1" (json_extract(doc, '$.name'))`);
  db.prepare('INSERT INTO rm_users_v1 (id, doc, position) VALUES (?, ?, ?)').run('ann', '{"_id":"ann","name":"Ann"}', '00000000000000000002');
  db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?)').run('users_v1', '00000000000000000002');
  db.close();
}

describe('read-models.sqlite schema versions', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'parley-read-models-schema-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a file written before schema versions: its schema unchanged, its documents and checkpoints read back, the newest version recorded', async () => {
    const file = join(dir, 'read-models.sqlite');
    writeBeforeVersions(file);
    const before = schemaOf(file);
    expect(before.version).toBe(0);

    const store = new SqliteReadModelStore(file);
    try {
      expect(await store.get('users_v1', 'ann')).toEqual({ _id: 'ann', name: 'Ann' });
      expect(await store.find('users_v1', { where: { name: 'Ann' } })).toEqual([{ _id: 'ann', name: 'Ann' }]);
      expect(await store.getCheckpoint('users_v1')).toBe('00000000000000000002');
    } finally {
      await store.close();
    }
    expect(schemaOf(file)).toEqual({ version: NEWEST, schema: before.schema });
  });

  it('creates a new file at the newest version with the tables of files from before versions', async () => {
    const old = new Database(join(dir, 'old.sqlite'));
    old.exec(BEFORE_VERSIONS);
    old.close();
    const store = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    await store.close();
    expect(schemaOf(join(dir, 'read-models.sqlite'))).toEqual({ version: NEWEST, schema: schemaOf(join(dir, 'old.sqlite')).schema });
  });

  it('opens a database held in memory at the newest version, with its tables, and makes no file of that name', () => {
    const db = openReadModelDatabase(IN_MEMORY);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(NEWEST);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()).toEqual(['checkpoints', 'deferred_indexes', 'leases']);
    } finally {
      db.close();
    }
    expect(existsSync(IN_MEMORY)).toBe(false);
  });

  it('refuses a file of a newer version, naming it, its version and the newest it knows, and leaves it as it was', () => {
    const file = join(dir, 'read-models.sqlite');
    writeBeforeVersions(file);
    const newer = new Database(file);
    newer.pragma('user_version = 5');
    newer.close();
    const before = schemaOf(file);

    let refused: unknown;
    try {
      new SqliteReadModelStore(file);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(NewerVersionError);
    expect((refused as Error).message).toBe(
      `${file} has schema version 5, newer than this Parley knows (up to version ${NEWEST}): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    expect(schemaOf(file)).toEqual(before);
  });
});
