import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateSchema, SchemaMigration } from './sqlite-schema-versions';
import { NewerVersionError } from './stored-versions';

/** The migration mechanism of every SQLite file, on real files, with a schema of its own. */
describe('migrateSchema', () => {
  let dir: string;
  let file: string;
  const connections: Database.Database[] = [];
  /** How many times each step ran, by version. */
  let runs: Record<number, number>;

  const connect = (): Database.Database => {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    connections.push(db);
    return db;
  };
  const step = (version: number, sql: string): SchemaMigration => ({
    version,
    description: `step ${version}`,
    up: (db) => {
      runs[version] = (runs[version] ?? 0) + 1;
      db.exec(sql);
    },
  });
  const v1 = step(1, 'CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  const v2 = step(2, 'ALTER TABLE notes ADD COLUMN author TEXT');
  const v3 = step(3, 'CREATE INDEX notes_by_author ON notes (author)');
  const failing = (version: number): SchemaMigration => ({
    version,
    description: 'fails half-way',
    up: (db) => {
      db.exec('CREATE TABLE half_done (x)');
      throw new Error('the step failed');
    },
  });
  const versionOf = (db: Database.Database) => db.pragma('user_version', { simple: true });
  const tables = (db: Database.Database) =>
    (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name").all() as { name: string }[]).map((r) => r.name);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-schema-versions-'));
    file = join(dir, 'some.sqlite');
    runs = {};
  });
  afterEach(() => {
    for (const db of connections.splice(0)) if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('brings a new file to the newest version, every step once and in order, and records it', () => {
    const db = connect();
    expect(migrateSchema(db, file, [v1, v2, v3])).toEqual({ from: 0, to: 3 });
    expect(versionOf(db)).toBe(3);
    expect(tables(db)).toEqual(['notes', 'notes_by_author']);
    expect(runs).toEqual({ 1: 1, 2: 1, 3: 1 });
    db.prepare('INSERT INTO notes (text, author) VALUES (?, ?)').run('hello', 'ann');
  });

  it('takes a file without a recorded version (written before versions were) as version 0: version 1 keeps its tables and rows, and stamps it', () => {
    const db = connect();
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL); INSERT INTO notes (text) VALUES ('kept')");
    const schemaBefore = db.prepare('SELECT sql FROM sqlite_master').all();
    expect(migrateSchema(db, file, [v1])).toEqual({ from: 0, to: 1 });
    expect(versionOf(db)).toBe(1);
    expect(db.prepare('SELECT sql FROM sqlite_master').all()).toEqual(schemaBefore);
    expect(db.prepare('SELECT text FROM notes').pluck().all()).toEqual(['kept']);
  });

  it('runs only the steps a file lacks, and none on a file at the newest version, which it only reads', () => {
    migrateSchema(connect(), file, [v1]);
    expect(migrateSchema(connect(), file, [v1, v2, v3])).toEqual({ from: 1, to: 3 });
    expect(runs).toEqual({ 1: 1, 2: 1, 3: 1 });

    // Another connection holds the write lock, and will not let go: an up-to-date file still opens.
    const writer = connect();
    writer.exec('BEGIN IMMEDIATE');
    const reader = connect();
    reader.pragma('busy_timeout = 0');
    expect(migrateSchema(reader, file, [v1, v2, v3])).toEqual({ from: 3, to: 3 });
    expect(runs).toEqual({ 1: 1, 2: 1, 3: 1 });
    writer.exec('ROLLBACK');
  });

  it('runs a step once when two processes open the file at the same moment: the second finds it done under the lock', () => {
    const first = connect();
    const second = connect();
    // The first migrates between the second's look at the version and its transaction.
    let interleaved = false;
    const racing = new Proxy(second, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name, target);
        if (name !== 'pragma') return typeof value === 'function' ? value.bind(target) : value;
        return (source: string, options?: Database.PragmaOptions) => {
          const read = target.pragma(source, options);
          if (source === 'user_version' && !interleaved) {
            interleaved = true;
            migrateSchema(first, file, [v1, v2]);
          }
          return read;
        };
      },
    });
    expect(migrateSchema(racing, file, [v1, v2])).toEqual({ from: 0, to: 2 });
    expect(interleaved).toBe(true);
    expect(runs).toEqual({ 1: 1, 2: 1 });
    expect(versionOf(second)).toBe(2);
  });

  it('leaves the file as it was when a step fails: earlier steps of the same open and the failed one undone, the version unchanged', () => {
    migrateSchema(connect(), file, [v1]);
    const db = connect();
    expect(() => migrateSchema(db, file, [v1, v2, failing(3)])).toThrow('the step failed');
    expect(versionOf(db)).toBe(1);
    expect(tables(db)).toEqual(['notes']);
    expect(db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('notes')).toEqual(['id', 'text']);
    expect(db.inTransaction).toBe(false);

    // Once the step is mended, the next open runs both.
    expect(migrateSchema(db, file, [v1, v2, v3])).toEqual({ from: 1, to: 3 });
    expect(runs).toEqual({ 1: 1, 2: 2, 3: 1 });
  });

  it('refuses a file of a newer version, naming the file, its version and the newest it knows, and changes nothing', () => {
    const db = connect();
    db.pragma('user_version = 7');
    let refused: unknown;
    try {
      migrateSchema(db, file, [v1, v2]);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(NewerVersionError);
    expect(refused).toMatchObject({ where: file, kind: 'schema', found: 7, newest: 2 });
    expect((refused as Error).message).toBe(
      `${file} has schema version 7, newer than this Parley knows (up to version 2): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    expect(versionOf(db)).toBe(7);
    expect(tables(db)).toEqual([]);
    expect(runs).toEqual({});
  });

  it('refuses a negative version, which no release writes', () => {
    const db = connect();
    db.pragma('user_version = -1');
    expect(() => migrateSchema(db, file, [v1])).toThrow(`${file} has schema version -1, which no release of Parley writes: it is not a file Parley wrote`);
  });

  it('wants its steps numbered 1, 2, 3…', () => {
    expect(() => migrateSchema(connect(), file, [v1, v3])).toThrow('schema migrations must be numbered 1, 2, 3…: step 2 says 3');
    expect(runs).toEqual({});
  });
});
