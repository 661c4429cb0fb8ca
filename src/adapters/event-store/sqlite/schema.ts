import type Database from 'better-sqlite3';
import { openSqliteFile } from '../../shared/sqlite-file';
import { SchemaMigration } from '../../shared/sqlite-schema-versions';
import { unpackEventTexts } from './packed-texts';

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
 * SQL for an event id as `event_rows` keeps it: a UUID in its canonical text (lower-case hex,
 * dashes: what `newEventId` makes) as its 16 bytes, any other id as its text. `id` is an SQL
 * expression. `compactEventId` is the same in TypeScript (the appender's).
 */
const COMPACT_ID = (id: string) =>
  `CASE WHEN length(${id}) = 36 AND ${id} GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]' ` +
  `THEN unhex(replace(${id}, '-', '')) ELSE ${id} END`;
/** The text of a kept event id (`row` a table alias). */
const EVENT_ID_TEXT = (row: string) =>
  `CASE WHEN typeof(${row}.event_id) = 'blob' THEN lower(substr(hex(${row}.event_id), 1, 8) || '-' || substr(hex(${row}.event_id), 9, 4) || '-' || ` +
  `substr(hex(${row}.event_id), 13, 4) || '-' || substr(hex(${row}.event_id), 17, 4) || '-' || substr(hex(${row}.event_id), 21)) ELSE ${row}.event_id END`;
/**
 * SQL for a recording time as `event_rows` keeps it: an ISO 8601 time as \`toISOString\` writes
 * it (what the store records) as its milliseconds since 1970, any other text as it is.
 * `compactRecordedAt` is the same in TypeScript.
 */
const COMPACT_TIME = (time: string) =>
  `CASE WHEN strftime('%Y-%m-%dT%H:%M:%fZ', ${time}) = ${time} THEN CAST(round(unixepoch(${time}, 'subsec') * 1000) AS INTEGER) ELSE ${time} END`;
/** The text of a kept recording time. */
const RECORDED_AT_TEXT = (row: string) =>
  `CASE WHEN typeof(${row}.recorded_at) = 'integer' THEN strftime('%Y-%m-%dT%H:%M:%fZ', ${row}.recorded_at / 1000.0, 'unixepoch') ELSE ${row}.recorded_at END`;

/** What `events` shows of a row: the columns of version 1, as version 1 held them (but a packed row's data and metadata: version 3). */
export const EVENT_COLUMNS = {
  position: 'r.position',
  stream: 's.name',
  revision: 'r.revision',
  event_id: EVENT_ID_TEXT('r'),
  type: 'r.type',
  data: 'r.data',
  metadata: 'r.metadata',
  recorded_at: RECORDED_AT_TEXT('r'),
} as const;

/** The rows joined to their streams' names: what `events` selects from (aliases `r` and `s`). */
export const EVENT_ROWS = 'event_rows r JOIN streams s ON s.id = r.stream';

/**
 * Version 2: compact rows, about 150 bytes an event less (a short message's event was about 775
 * bytes with its index entries). A stream's name is stored once (\`streams\`), events and the
 * (stream, revision) index hold its integer id; event ids that are UUIDs are kept as their 16
 * bytes (in the row and in the unique index); recording times as integer milliseconds. Other
 * ids and times, from imports, stay text (SQLite keeps each value's own type). \`events\`
 * becomes a view with version 1's columns and values, so tools and readers of the file see
 * what they saw; inserting into it (a tool writing the file, a test's fixture) stores a compact
 * row. The log stays append-only: \`event_rows\` refuses updates and deletes as \`events\` did.
 */
const VERSION_2 = `
  CREATE TABLE streams (
    id   INTEGER PRIMARY KEY,
    name TEXT    NOT NULL UNIQUE
  );
  CREATE TABLE event_rows (
    position    INTEGER PRIMARY KEY AUTOINCREMENT,
    stream      INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    event_id            NOT NULL UNIQUE,
    type        TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    metadata    TEXT    NOT NULL,
    recorded_at         NOT NULL,
    UNIQUE (stream, revision)
  );
  INSERT INTO streams (name) SELECT stream FROM events GROUP BY stream ORDER BY MIN(position);
  INSERT INTO event_rows (position, stream, revision, event_id, type, data, metadata, recorded_at)
    SELECT e.position, s.id, e.revision, ${COMPACT_ID('e.event_id')}, e.type, e.data, e.metadata, ${COMPACT_TIME('e.recorded_at')}
    FROM events e JOIN streams s ON s.name = e.stream ORDER BY e.position;
  UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'events') WHERE name = 'event_rows';
  DROP TABLE events;
  -- The log is append-only: nothing is ever updated or deleted in place.
  CREATE TRIGGER events_no_update BEFORE UPDATE ON event_rows
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE TRIGGER events_no_delete BEFORE DELETE ON event_rows
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE VIEW events (${Object.keys(EVENT_COLUMNS).join(', ')}) AS
    SELECT ${Object.values(EVENT_COLUMNS).join(', ')} FROM ${EVENT_ROWS};
  CREATE TRIGGER events_view_no_update INSTEAD OF UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE TRIGGER events_view_no_delete INSTEAD OF DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE TRIGGER events_insert INSTEAD OF INSERT ON events BEGIN
    INSERT INTO streams (name) VALUES (NEW.stream) ON CONFLICT (name) DO NOTHING;
    INSERT INTO event_rows (position, stream, revision, event_id, type, data, metadata, recorded_at)
      VALUES (NEW.position, (SELECT id FROM streams WHERE name = NEW.stream), NEW.revision, ${COMPACT_ID('NEW.event_id')},
              NEW.type, NEW.data, NEW.metadata, ${COMPACT_TIME('NEW.recorded_at')});
  END;
`;

/**
 * Version 3: rows appended from now on keep their data and metadata deflated, in one blob in
 * `data` (`metadata` holds an empty blob): about 265 bytes less for a short message's event
 * (packed-texts.ts). Rows already written stay as they are, text, and read as before: the step
 * changes no table, only the version, which an older release must refuse (it could not read
 * the blobs). `events` shows a packed row's blob as it is stored (plain SQL cannot inflate).
 */
const VERSION_3 = '-- No table changes: rows are packed from this version on.';

/**
 * The event log's schema, version by version (`migrateSchema` applies them at open). Version 1
 * is also the schema of files written before versions were recorded (version 0). Version 2
 * rewrites the log's rows in one transaction at open (about a second per 100,000 events).
 */
export const EVENT_LOG_MIGRATIONS: readonly SchemaMigration[] = [
  { version: 1, description: 'the events table, append-only', up: (db) => db.exec(VERSION_1) },
  { version: 2, description: 'compact rows: streams by id, UUIDs as bytes, times as milliseconds; events a view', up: (db) => db.exec(VERSION_2) },
  { version: 3, description: "new rows' data and metadata deflated in one blob (rows written before stay text)", up: (db) => db.exec(VERSION_3) },
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An event id as `event_rows` keeps it (COMPACT_ID's rule). */
export function compactEventId(id: string): Buffer | string {
  return UUID.test(id) ? Buffer.from(id.replace(/-/g, ''), 'hex') : id;
}

/** The times SQLite's strftime writes as toISOString does: years 0000 to 9999. */
const YEAR_0 = -62167219200000;
const YEAR_10000 = 253402300800000;

/** A recording time as `event_rows` keeps it (COMPACT_TIME's rule); a bigint binds as an SQL integer (a number as a real). */
export function compactRecordedAt(time: string): bigint | string {
  const ms = Date.parse(time);
  return Number.isFinite(ms) && ms >= YEAR_0 && ms < YEAR_10000 && new Date(ms).toISOString() === time ? BigInt(ms) : time;
}

/**
 * Opens the event log's file (private, created if absent) at the newest schema version (a newer
 * file is refused). The commit's own fsync is the store's, off the event loop (see
 * WalDurability). The log deletes nothing, but whatever SQLite frees (a dropped index, a
 * migration's table) is overwritten too. `maxPageCount` caps the file like a quota.
 */
export function openEventLogDatabase(file: string, options: { readonly maxPageCount?: number } = {}): Database.Database {
  const db = openSqliteFile(file, { migrations: EVENT_LOG_MIGRATIONS, busyTimeoutMs: READ_BUSY_TIMEOUT_MS, maxPageCount: options.maxPageCount });
  db.function(PACKED_FIELDS_FUNCTION, { deterministic: true }, (blob) => {
    const { data, metadata } = unpackEventTexts(blob as Buffer);
    return `,"data":${data},"metadata":${metadata}`;
  });
  return db;
}

/**
 * An SQL function of the connections `openEventLogDatabase` opens (not of the file: other
 * tools do not have it): a packed row's `data` blob as the JSON text `,"data":…,"metadata":…`.
 */
export const PACKED_FIELDS_FUNCTION = 'packed_event_fields';
