import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WrongExpectedRevisionError,
} from '../../../shared/ports/event-store.port';
import { PollingFeed } from '../../shared/closeable-feed';

export interface SqliteEventStoreOptions {
  /** `FULL` (default) fsyncs every commit: an acknowledged append survives a power cut. */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How often idle subscriptions look for events appended by other processes (the admin CLI). */
  readonly pollMs?: number;
  readonly pageSize?: number;
}

interface Row {
  position: number;
  stream: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

interface PendingAppend {
  streamName: string;
  events: readonly EventToAppend[];
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

const POSITION_WIDTH = 20;
export const sqlitePosition = (seq: number): LogPosition => String(seq).padStart(POSITION_WIDTH, '0');
const seqOf = (p: LogPosition | null | undefined): number => (p ? Number(p) : 0);

/**
 * The embedded event log: one SQLite file in WAL mode. Appends that arrive while the event
 * loop is busy are grouped into one transaction and one fsync (group commit); each append
 * still checks its own expected revision and fails alone.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly pollMs: number;
  private readonly pageSize: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly listeners = new Set<() => void>();
  /** Prepared statements by SQL text: preparing costs about as much as running a small read. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly stmt: {
    revisionOf: Database.Statement<[string], { revision: number }>;
    insert: Database.Statement<unknown[]>;
    head: Database.Statement<[], { position: number | null }>;
  };

  constructor(file: string, options: SqliteEventStoreOptions = {}) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    this.db.pragma('busy_timeout = 5000');
    this.pollMs = options.pollMs ?? 500;
    this.pageSize = options.pageSize ?? 500;
    this.db.exec(`
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
    `);
    this.stmt = {
      revisionOf: this.db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      insert: this.db.prepare(
        'INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      head: this.db.prepare('SELECT MAX(position) AS position FROM events'),
    };
  }

  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    return new Promise((resolve, reject) => {
      this.queue.push({ streamName, events, expected, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private readonly appendOne = (item: PendingAppend): AppendResult => {
    const current = this.stmt.revisionOf.get(item.streamName)?.revision;
    const actual = current === undefined ? 'no_stream' : current;
    const { expected } = item;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'stream_exists' && actual !== 'no_stream') ||
      (typeof expected === 'number' && actual === expected);
    if (!ok) throw new WrongExpectedRevisionError(item.streamName, expected, actual);
    let revision = current ?? -1;
    let position = 0;
    const now = new Date().toISOString();
    for (const event of item.events) {
      revision++;
      const info = this.stmt.insert.run(
        item.streamName,
        revision,
        event.id ?? randomUUID(),
        event.type,
        JSON.stringify(event.data ?? null),
        JSON.stringify(event.metadata ?? {}),
        now,
      );
      position = Number(info.lastInsertRowid);
    }
    return { nextExpectedRevision: revision, position: sqlitePosition(position) };
  };

  private flush(): void {
    this.flushScheduled = false;
    const items = this.queue;
    this.queue = [];
    const outcomes: ({ ok: AppendResult } | { error: unknown })[] = [];
    // Each append runs in its own savepoint; the group commits (and fsyncs) once. IMMEDIATE
    // takes the write lock up front, so a writer in another process (the admin CLI) makes it
    // wait (busy_timeout) instead of failing on a lock upgrade.
    const one = this.db.transaction(this.appendOne);
    try {
      this.db
        .transaction(() => {
          for (const item of items) {
            try {
              outcomes.push({ ok: one(item) });
            } catch (error) {
              outcomes.push({ error });
            }
          }
        })
        .immediate();
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    items.forEach((item, i) => {
      const outcome = outcomes[i];
      if ('ok' in outcome) item.resolve(outcome.ok);
      else item.reject(outcome.error);
    });
    for (const listener of [...this.listeners]) listener();
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const rows = this.prepared(
      `SELECT * FROM events WHERE stream = ? AND revision ${backwards ? '<=' : '>='} ? ORDER BY revision ${backwards ? 'DESC' : 'ASC'} LIMIT ?`,
    ).all(streamName, from, options.maxCount ?? -1) as Row[];
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllSync(seqOf(options.after), options.maxCount ?? this.pageSize, options.filter);
  }

  private readAllSync(afterSeq: number, limit: number, filter?: LogFilter): RecordedEvent[] {
    const clauses = ['position > ?'];
    const params: unknown[] = [afterSeq];
    if (filter?.eventTypes?.length) {
      clauses.push(`type IN (${filter.eventTypes.map(() => '?').join(', ')})`);
      params.push(...filter.eventTypes);
    }
    if (filter?.streamPrefixes?.length) {
      clauses.push(`(${filter.streamPrefixes.map(() => 'substr(stream, 1, ?) = ?').join(' OR ')})`);
      for (const p of filter.streamPrefixes) params.push(p.length, p);
    }
    const rows = this.prepared(`SELECT * FROM events WHERE ${clauses.join(' AND ')} ORDER BY position ASC LIMIT ?`).all(
      ...params,
      limit,
    ) as Row[];
    return rows.map(toRecorded);
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async headPosition(): Promise<LogPosition | null> {
    const head = this.stmt.head.get()?.position;
    return head ? sqlitePosition(head) : null;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): LogSubscription {
    const start = seqOf(options.after);
    return new PollingFeed(
      (last) => this.readAllSync(last ? seqOf(last.position) : start, this.pageSize, options.filter),
      (signal) => this.onAppend(signal.ring),
      this.pollMs,
    );
  }

  subscribeToStream(streamName: string, options: SubscribeToStreamOptions = {}): LogSubscription {
    const start = options.afterRevision ?? -1;
    return new PollingFeed(
      (last) => this.readStream(streamName, { fromRevision: (last ? last.revision : start) + 1, maxCount: this.pageSize }),
      (signal) => this.onAppend(signal.ring),
      this.pollMs,
    );
  }

  private onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.queue.length) this.flush();
    if (this.db.open) this.db.close();
  }
}

const toRecorded = (row: Row): RecordedEvent => ({
  id: row.event_id,
  streamName: row.stream,
  revision: row.revision,
  position: sqlitePosition(row.position),
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
  recordedAt: row.recorded_at,
});
