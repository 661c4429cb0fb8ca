import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NewerVersionError } from '../../shared/stored-versions';
import { eventRowsOf } from '../../../../test/support/event-log-rows';
import { schemaOf } from '../../../../test/support/sqlite-files';
import { migrateSchema } from '../../shared/sqlite-schema-versions';
import { EVENT_LOG_MIGRATIONS } from './schema';
import { SqliteEventStore } from './sqlite-event-store';

/**
 * events.sqlite records its schema version: a file from before versions were recorded, or at
 * version 1 or 2, is brought to version 3 (compact rows, new rows' texts packed) with every event
 * as it was, and a file from a newer release is refused.
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

/** Every event as the file's `events` shows it, in order. */
function eventRows(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT position, stream, revision, event_id, type, data, metadata, recorded_at FROM events ORDER BY position').all();
  } finally {
    db.close();
  }
}

/** Seven rooms' message streams, named as the messages module names them. */
const ROOM_STREAMS = Array.from({ length: 7 }, (_, n) => `messages-bench.0a1b2c3d-0000-4000-8000-00000000000${n}`);

/** A version 1 file of `count` events as the store wrote them: UUID ids, times from toISOString, a few streams. */
function writeVersion1(file: string, count: number, extra: (insert: Database.Statement) => void = () => undefined): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(BEFORE_VERSIONS);
  db.pragma('user_version = 1');
  const insert = db.prepare('INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let n = 0; n < count; n++) {
      const at = new Date(Date.UTC(2026, 0, 1) + n * 7_919 + (n % 1000)).toISOString();
      insert.run(ROOM_STREAMS[n % 7], Math.floor(n / 7), randomUUID(), 'MessageSent', `{"id":${n},"text":"msg${n}"}`, JSON.stringify({ occurred_at: at }), at);
    }
    extra(insert);
  })();
  db.close();
}

/** A version 2 file (compact rows, texts as text) of `count` events as `writeVersion1` writes them, migrated as version 2's release did. */
function writeVersion2(file: string, count: number): void {
  writeVersion1(file, count);
  const db = new Database(file);
  migrateSchema(db, file, EVENT_LOG_MIGRATIONS.filter((m) => m.version <= 2));
  db.close();
}

/** Every row of `event_rows` as stored, bytes and all. */
function storedRows(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT * FROM event_rows ORDER BY position').all();
  } finally {
    db.close();
  }
}

/** A short message's event as the messages module writes it: its content sealed (random base64), ids and times beside it. */
const shortMessage = (n: number) => {
  const at = new Date(Date.UTC(2026, 0, 1) + n * 1_000).toISOString();
  const b64 = (bytes: number) => randomBytes(bytes).toString('base64');
  return {
    type: 'MessageSent',
    data: { id: n, user_id: `user-${n % 20}`, user_created_at: at, room_created_at: at, created_at: at, sealed: { k: `acme/message/${n}/0`, iv: b64(12), tag: b64(16), ct: b64(53) } },
    metadata: { instance_id: 'acme', actor: { key_id: 'key', user_id: `user-${n % 20}` }, occurred_at: at, request_id: randomUUID() },
    recordedAt: at,
  };
};

describe('events.sqlite schema versions', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'parley-events-schema-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a file written before schema versions and brings it to version 3: its events read back and appended to, the version recorded', async () => {
    const file = join(dir, 'events.sqlite');
    writeBeforeVersions(file);
    expect(schemaOf(file).version).toBe(0);
    const before = eventRows(file);

    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    try {
      expect((await store.readAll()).map((e) => [e.streamName, e.revision, e.type, e.data, e.id, e.recordedAt])).toEqual([
        ['user-ann', 0, 'UserCreated', { name: 'Ann' }, 'e-1', '2026-01-01T00:00:00.000Z'],
        ['user-ann', 1, 'UserRenamed', { name: 'Anne' }, 'e-2', '2026-01-01T00:00:01.000Z'],
      ]);
      expect((await store.append('user-ann', [{ type: 'UserRenamed', data: { name: 'Annie' }, metadata: OCCURRED }], 1)).nextExpectedRevision).toBe(2);
    } finally {
      await store.close();
    }
    expect(schemaOf(file).version).toBe(3);
    expect(eventRows(file).slice(0, 2)).toEqual(before);
  });

  it('migrates a version 1 log to compact rows that read back as they were written, ids, times and positions included', async () => {
    const file = join(dir, 'events.sqlite');
    writeVersion1(file, 3_000, (insert) => {
      // What an import may bring: ids that are not UUIDs (or not in their canonical text), times in other forms.
      insert.run('imported', 0, 'not-a-uuid', 'Imported', '{}', '{}', '2020-01-01T00:00:00Z');
      insert.run('imported', 1, '0A1B2C3D-0000-4000-8000-00000000000F', 'Imported', '{}', '{}', '2020-01-01T00:00:00.000+01:00');
      insert.run('imported', 2, randomUUID(), 'Imported', '{}', '{}', '1969-12-31T23:59:59.999Z');
    });
    const before = eventRows(file);
    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    try {
      expect(eventRows(file)).toEqual(before);
      const read = await store.readAll({ maxCount: 10_000 });
      expect(read.map((e) => [Number(e.position), e.streamName, e.revision, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), e.recordedAt])).toEqual(
        (before as Record<string, unknown>[]).map((r) => [r.position, r.stream, r.revision, r.event_id, r.type, r.data, r.metadata, r.recorded_at]),
      );
      expect(await store.readStream(ROOM_STREAMS[3], { fromRevision: 5, maxCount: 2 })).toEqual(read.filter((e) => e.streamName === ROOM_STREAMS[3]).slice(5, 7));
      // Appends go on after the last position, to the streams the log had.
      const appended = await store.append(ROOM_STREAMS[3], [{ type: 'MessageSent', data: { id: 'next' }, metadata: OCCURRED }], Math.floor(2_999 / 7));
      expect(Number(appended.position)).toBe(3_004);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    const kept = db.prepare('SELECT typeof(event_id) AS id, typeof(recorded_at) AS at, count(*) AS n FROM event_rows GROUP BY 1, 2 ORDER BY 1, 2').all();
    db.close();
    expect(kept).toEqual([
      { id: 'blob', at: 'integer', n: 3_002 },
      { id: 'text', at: 'text', n: 2 },
    ]);
  });

  it('stores a short message event in at least 120 bytes less than version 1 did', async () => {
    const old = join(dir, 'old.sqlite');
    writeVersion1(old, 5_000);
    const db = new Database(old);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const v1Bytes = statSync(old).size;
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    const rows = eventRows(old) as { stream: string; revision: number; type: string; data: string; metadata: string; recorded_at: string }[];
    await Promise.all(rows.map((r) => store.append(r.stream, [{ type: r.type, data: JSON.parse(r.data), metadata: JSON.parse(r.metadata), recordedAt: r.recorded_at }], r.revision === 0 ? 'no_stream' : r.revision - 1)));
    await store.close();
    const v2Bytes = statSync(file).size;
    expect((v1Bytes - v2Bytes) / rows.length).toBeGreaterThan(120);
  });

  it('brings a version 2 log to version 3 without rewriting a row: its rows read back as before, beside packed rows appended after them', async () => {
    const file = join(dir, 'events.sqlite');
    writeVersion2(file, 300);
    expect(schemaOf(file).version).toBe(2);
    const stored = storedRows(file);
    const written = eventRows(file) as Record<string, unknown>[];
    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    try {
      expect(schemaOf(file).version).toBe(3);
      expect(storedRows(file)).toEqual(stored);
      const appended = shortMessage(300);
      const stream = ROOM_STREAMS[0];
      const revisions = written.filter((r) => r.stream === stream).length;
      await store.append(stream, [appended], revisions - 1);
      const read = await store.readAll({ maxCount: 1_000 });
      expect(read.map((e) => [Number(e.position), e.streamName, e.revision, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), e.recordedAt])).toEqual([
        ...written.map((r) => [r.position, r.stream, r.revision, r.event_id, r.type, r.data, r.metadata, r.recorded_at]),
        [301, stream, revisions, read[300].id, 'MessageSent', JSON.stringify(appended.data), JSON.stringify(appended.metadata), appended.recordedAt],
      ]);
      expect(await store.readStream(stream, { fromRevision: revisions - 2 })).toEqual(read.filter((e) => e.streamName === stream).slice(-3));
    } finally {
      await store.close();
    }
    // Tools reading the file see the old rows as they were, and the new one's texts packed in `data`.
    const db = new Database(file, { readonly: true });
    const kinds = db.prepare('SELECT typeof(data) AS data, typeof(metadata) AS metadata, length(metadata) AS m, count(*) AS n FROM events GROUP BY 1, 2, 3 ORDER BY 1').all();
    db.close();
    expect(kinds).toEqual([
      { data: 'blob', metadata: 'blob', m: 0, n: 1 },
      { data: 'text', metadata: 'text', m: JSON.stringify(OCCURRED).length, n: 300 },
    ]);
    expect(eventRowsOf(file).slice(0, 300)).toEqual(written);
  });

  it("stores a short message's event in at least 200 bytes less than version 2 did", async () => {
    const count = 3_000;
    const events = Array.from({ length: count }, (_, n) => shortMessage(n));
    const old = join(dir, 'old.sqlite');
    writeVersion2(old, 0);
    const v2 = new Database(old);
    const insert = v2.prepare('INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    v2.transaction(() => events.forEach((e, n) => insert.run('room', n, randomUUID(), e.type, JSON.stringify(e.data), JSON.stringify(e.metadata), e.recordedAt)))();
    v2.pragma('wal_checkpoint(TRUNCATE)');
    v2.close();
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
    for (let n = 0; n < count; n += 500) await store.append('room', events.slice(n, n + 500), n === 0 ? 'no_stream' : n - 1);
    await store.close();
    expect((statSync(old).size - statSync(file).size) / count).toBeGreaterThan(200);
  });

  it('creates a new file with the very schema a migrated file has', async () => {
    const old = join(dir, 'old.sqlite');
    writeBeforeVersions(old);
    await new SqliteEventStore(old).close();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await store.close();
    expect(schemaOf(join(dir, 'events.sqlite'))).toEqual(schemaOf(old));
  });

  it('refuses a file of a newer version, naming it, its version and the newest it knows, and leaves it as it was', async () => {
    const file = join(dir, 'events.sqlite');
    writeBeforeVersions(file);
    const newer = new Database(file);
    newer.pragma('user_version = 4');
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
      `${file} has schema version 4, newer than this Parley knows (up to version 3): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    expect(schemaOf(file)).toEqual(before);
  });
});
