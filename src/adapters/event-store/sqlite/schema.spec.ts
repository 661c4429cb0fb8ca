import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NewerVersionError } from '../../shared/stored-versions';
import { schemaOf } from '../../../../test/support/sqlite-files';
import { SqliteEventStore } from './sqlite-event-store';

/**
 * events.sqlite records its schema version: a file from before versions were recorded opens
 * as version 1, unchanged, and a file from a newer release is refused.
 */

/** What Parley wrote into events.sqlite before schema versions (main e30e27a), verbatim. */
const BEFORE_VERSIONS = `
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

const OCCURRED = { occurred_at: '2026-01-01T00:00:00.000Z' };

/** A file as Parley wrote it before versions: the old schema, two events of one stream, no version. */
function writeBeforeVersions(file: string): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(BEFORE_VERSIONS);
  const insert = db.prepare('INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  insert.run('user-ann', 0, 'e-1', 'UserCreated', '{"name":"Ann"}', JSON.stringify(OCCURRED), '2026-01-01T00:00:00.000Z');
  insert.run('user-ann', 1, 'e-2', 'UserRenamed', '{"name":"Anne"}', JSON.stringify(OCCURRED), '2026-01-01T00:00:01.000Z');
  db.close();
}

describe('events.sqlite schema versions', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'parley-events-schema-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a file written before schema versions as version 1: its schema unchanged, its events read back and appended to, the version recorded', async () => {
    const file = join(dir, 'events.sqlite');
    writeBeforeVersions(file);
    const before = schemaOf(file);
    expect(before.version).toBe(0);

    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    try {
      expect((await store.readAll()).map((e) => [e.streamName, e.revision, e.type, e.data])).toEqual([
        ['user-ann', 0, 'UserCreated', { name: 'Ann' }],
        ['user-ann', 1, 'UserRenamed', { name: 'Anne' }],
      ]);
      expect((await store.append('user-ann', [{ type: 'UserRenamed', data: { name: 'Annie' }, metadata: OCCURRED }], 1)).nextExpectedRevision).toBe(2);
    } finally {
      await store.close();
    }
    expect(schemaOf(file)).toEqual({ version: 1, schema: before.schema });
  });

  it('creates a new file at version 1 with the very schema of files from before versions', async () => {
    const old = join(dir, 'old.sqlite');
    writeBeforeVersions(old);
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await store.close();
    expect(schemaOf(join(dir, 'events.sqlite'))).toEqual({ version: 1, schema: schemaOf(old).schema });
  });

  it('refuses a file of a newer version, naming it, its version and the newest it knows, and leaves it as it was', async () => {
    const file = join(dir, 'events.sqlite');
    writeBeforeVersions(file);
    const newer = new Database(file);
    newer.pragma('user_version = 2');
    newer.close();
    const before = schemaOf(file);

    let refused: unknown;
    try {
      new SqliteEventStore(file);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(NewerVersionError);
    expect((refused as Error).message).toBe(
      `${file} has schema version 2, newer than this Parley knows (up to version 1): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    expect(schemaOf(file)).toEqual(before);
  });
});
