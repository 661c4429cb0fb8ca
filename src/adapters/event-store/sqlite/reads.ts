import type Database from 'better-sqlite3';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import { LogFilter, ReadStreamOptions } from '../../../shared/ports/event-store.port';
import { POSITION_WIDTH, sqlitePosition } from './positions';
import { eventTextsOf } from './packed-texts';
import { EVENT_COLUMNS as C, EVENT_ROWS, PACKED_FIELDS_FUNCTION } from './schema';

/** An event's columns in this order, read as an array (no object per row: reads are a rebuild's first cost). */
const COLUMNS = Object.values(C).join(', ');
type Row = [position: number, stream: string, revision: number, eventId: string, type: string, data: string | Buffer, metadata: string | Buffer, recordedAt: string];

/**
 * A log read (a rebuild's first cost) builds each event's JSON text in SQLite and parses the
 * page with one JSON.parse: about a tenth less CPU per event than a row of columns turned into
 * an object with two JSON.parse calls (measured on a 400,000-event log). `data` and `metadata` are
 * stored as JSON texts (written by JSON.stringify), so they are spliced in as they are (a packed
 * row's, inflated by an SQL function: schema.ts, version 3); the keys and their order are those
 * of `toRecorded`.
 */
const EVENT_AS_JSON = `'{"id":' || json_quote(${C.event_id}) || ',"streamName":' || json_quote(${C.stream}) || ',"revision":' || ${C.revision} ||
  ',"position":"' || printf('%0${POSITION_WIDTH}d', ${C.position}) || '","type":' || json_quote(${C.type}) ||
  CASE WHEN typeof(${C.data}) = 'blob' THEN ${PACKED_FIELDS_FUNCTION}(${C.data}) ELSE ',"data":' || ${C.data} || ',"metadata":' || ${C.metadata} END ||
  ',"recordedAt":' || json_quote(${C.recorded_at}) || '}'`;
/** The id of a stream by its name (rows hold the id: schema.ts, version 2). */
const STREAM_ID = '(SELECT id FROM streams WHERE name = ?)';
/** Events per JSON.parse: bounds the joined text (V8 caps a string at about 512 MB) whatever the page and event sizes. */
const TEXTS_PER_PARSE = 1000;

/**
 * The log's reads, as SQL. `below` bounds every read by position: the caller passes the first
 * position it may not show yet (see WalDurability.readableBelow), or MAX_SAFE_INTEGER.
 * Statements are prepared once per SQL text: preparing costs about as much as running a small read.
 */
export class LogReads {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly head: Database.Statement<[number], { position: number | null }>;
  private readonly firstFrom: Database.Statement<[number, number], { position: number; recorded_at: string }>;

  constructor(private readonly db: Database.Database) {
    this.head = db.prepare('SELECT MAX(position) AS position FROM event_rows WHERE position < ?');
    this.firstFrom = db.prepare(
      `SELECT r.position AS position, ${C.recorded_at} AS recorded_at FROM event_rows r WHERE r.position >= ? AND r.position < ? ORDER BY r.position LIMIT 1`,
    );
  }

  /** A stream's events from `fromRevision`, forwards or backwards, at most `maxCount`. */
  stream(streamName: string, options: ReadStreamOptions, below: number): RecordedEvent[] {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const rows = this.prepared(
      `SELECT ${COLUMNS} FROM ${EVENT_ROWS} WHERE r.stream = ${STREAM_ID} AND r.revision ${backwards ? '<=' : '>='} ? AND r.position < ? ` +
        `ORDER BY r.revision ${backwards ? 'DESC' : 'ASC'} LIMIT CAST(? AS INTEGER)`,
      'raw',
    ).all(streamName, from, below, options.maxCount ?? -1) as Row[];
    return rows.map(toRecorded);
  }

  /** Up to `limit` events of the whole log after position `afterSeq`, in order, those `filter` lets through. */
  all(afterSeq: number, limit: number, below: number, filter?: LogFilter): RecordedEvent[] {
    const clauses = ['r.position > ?', 'r.position < ?'];
    const params: unknown[] = [afterSeq, below];
    if (filter?.eventTypes?.length) {
      clauses.push(`r.type IN (${filter.eventTypes.map(() => '?').join(', ')})`);
      params.push(...filter.eventTypes);
    }
    if (filter?.streamPrefixes?.length) {
      clauses.push(`(${filter.streamPrefixes.map(() => 'substr(s.name, 1, ?) = ?').join(' OR ')})`);
      for (const p of filter.streamPrefixes) params.push(p.length, p);
    }
    const texts = this.prepared(
      `SELECT ${EVENT_AS_JSON} FROM ${EVENT_ROWS} WHERE ${clauses.join(' AND ')} ORDER BY r.position ASC LIMIT CAST(? AS INTEGER)`,
      'pluck',
    ).all(...params, limit) as string[];
    if (texts.length <= TEXTS_PER_PARSE) return texts.length ? (JSON.parse(`[${texts.join(',')}]`) as RecordedEvent[]) : [];
    const events: RecordedEvent[] = [];
    for (let i = 0; i < texts.length; i += TEXTS_PER_PARSE) {
      for (const event of JSON.parse(`[${texts.slice(i, i + TEXTS_PER_PARSE).join(',')}]`) as RecordedEvent[]) events.push(event);
    }
    return events;
  }

  /** The last position below `below`, or null when there is none. */
  headBelow(below: number): LogPosition | null {
    const head = this.head.get(below)?.position;
    return head ? sqlitePosition(head) : null;
  }

  /**
   * The position of the first event recorded at or after `time` (ISO 8601), below `below`, or
   * null when every event was recorded before it: a binary search over positions, one seek of
   * the primary key per step (about 20 for a million events), exact where recorded times grow
   * with positions, as they do for every event the store records itself (an import's events
   * keep their original times: see EventStore.positionBeforeTime).
   */
  firstRecordedAtOrAfter(time: string, below: number): number | null {
    let found: number | null = null;
    for (let low = 1, high = Math.min(below - 1, Number(this.head.get(below)?.position ?? 0)); low <= high; ) {
      const middle = Math.floor((low + high) / 2);
      const row = this.firstFrom.get(middle, high + 1);
      if (!row) {
        high = middle - 1; // no event from `middle` to `high` (positions may have gaps)
      } else if (row.recorded_at >= time) {
        found = row.position;
        high = middle - 1;
      } else {
        low = row.position + 1;
      }
    }
    return found;
  }

  /**
   * A prepared statement by SQL text and row shape: `raw`, rows are arrays of the selected
   * columns; `pluck`, rows are the one selected column's value.
   */
  private prepared(sql: string, rows: 'raw' | 'pluck'): Database.Statement {
    const key = `${rows}:${sql}`;
    let statement = this.statements.get(key);
    if (!statement) {
      statement = rows === 'raw' ? this.db.prepare(sql).raw(true) : this.db.prepare(sql).pluck(true);
      this.statements.set(key, statement);
    }
    return statement;
  }
}

const toRecorded = ([position, stream, revision, eventId, type, storedData, storedMetadata, recordedAt]: Row): RecordedEvent => {
  const { data, metadata } = eventTextsOf(storedData, storedMetadata);
  return {
    id: eventId,
    streamName: stream,
    revision,
    position: sqlitePosition(position),
    type,
    data: JSON.parse(data),
    metadata: JSON.parse(metadata),
    recordedAt,
  };
};
