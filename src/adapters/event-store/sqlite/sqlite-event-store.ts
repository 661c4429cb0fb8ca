import Database from 'better-sqlite3';
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  LogSubscription,
  ReadAllOptions,
  EventStoreUnavailableError,
  AppendOutcomeUnknownError,
  ReadStreamOptions,
  SpaceLeft,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WrongExpectedRevisionError,
  newEventId,
} from '../../../shared/ports/event-store.port';
import { PollingFeed } from '../../shared/closeable-feed';
import { WRITER_CHECKPOINT_PAGES, WalCheckpointer } from '../../shared/sqlite-wal-checkpointer';
import { sqliteSpaceLeft } from '../../shared/sqlite-space-left';
import { messageOf } from '../../../shared/domain/errors';
import { makePrivateDatabaseFile } from '../../../shared/files/private-files';

export interface SqliteEventStoreOptions {
  /**
   * `FULL` (default): an append is answered once its commit is on disk (it survives a power
   * cut). `NORMAL`: once committed (it survives a crash of the process, not of the machine).
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How the WAL file is put on disk (node's `fdatasync`); fault tests hold or fail it. */
  readonly walFlush?: WalFlush;
  /** How often idle subscriptions look for events appended by other processes (the admin CLI). */
  readonly pollMs?: number;
  readonly pageSize?: number;
  /**
   * How long an append waits for the write lock another process holds (the admin CLI, or a
   * tool writing the same file) before failing with "locked". Such writers hold it for
   * milliseconds; the wait is asynchronous, the event loop keeps serving. Default 2000 ms.
   */
  readonly lockTimeoutMs?: number;
  /** Caps the file at this many pages, like a quota: appends past it fail as "disk full". */
  readonly maxPageCount?: number;
}

/** An event's columns in this order, read as an array (no object per row: reads are a rebuild's first cost). */
const COLUMNS = 'position, stream, revision, event_id, type, data, metadata, recorded_at';
type Row = [position: number, stream: string, revision: number, eventId: string, type: string, data: string, metadata: string, recordedAt: string];

interface PendingAppend {
  streamName: string;
  events: readonly EventToAppend[];
  expected: ExpectedRevision;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
  /** When it was queued: it waits for another process's write lock until `lockTimeoutMs` after. */
  queuedAt: number;
}

type Outcome = { ok: AppendResult } | { error: unknown };

/** Puts a file's written data on disk: off the event loop for commits, at once for another process's. */
export interface WalFlush {
  fdatasync(fd: number, done: (error: NodeJS.ErrnoException | null) => void): void;
  fdatasyncSync(fd: number): void;
}
const NODE_WAL_FLUSH: WalFlush = { fdatasync, fdatasyncSync };

/** One commit whose WAL frames are not known to be on disk yet, and the appends it answers. */
interface UnsyncedCommit {
  /** Its first position (or one before it): reads of the log stop short of it until it is on disk. */
  readonly first: number;
  readonly last: number;
  /** Answered once it is on disk (emptied when told it may not be). */
  answers: [PendingAppend, AppendResult][];
}

/** How long a read waits, synchronously, on a lock (in WAL mode only recovery and checkpoints make readers wait). */
const READ_BUSY_TIMEOUT_MS = 5000;
/** Between two tries for the write lock another process holds. */
const LOCK_RETRY_MS = 20;
/** Before flushing the WAL again after a flush failed. */
const SYNC_RETRY_MS = 1_000;

const POSITION_WIDTH = 20;
export const sqlitePosition = (seq: number): LogPosition => String(seq).padStart(POSITION_WIDTH, '0');
const seqOf = (p: LogPosition | null | undefined): number => (p ? Number(p) : 0);

/**
 * The embedded event log: one SQLite file in WAL mode. Appends that arrive while the event
 * loop is busy are grouped into one transaction and one fsync (group commit); each append
 * still checks its own expected revision and fails alone.
 *
 * The fsync runs off the event loop: SQLite commits without syncing (`synchronous = NORMAL`),
 * and `fdatasync` of the WAL file on libuv's thread pool puts the commit on disk before its
 * appends are answered; the event loop meanwhile serves other requests and commits the next
 * group (measured: 14 % more sends per second to one busy room than with SQLite's own fsync
 * inside the commit). Until then the commit is readable on this connection only by stream
 * (a command decides on what it appended before), never by `readAll`, `headPosition` or a
 * subscription: projections and subscribers see only what a power cut cannot take back.
 * Commits another process made (a projector worker reads what API processes write) are put
 * on disk by the reader before it returns them, and so is whatever the WAL holds at open (a
 * process killed between a commit and its flush).
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly pollMs: number;
  private readonly pageSize: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly lockTimeoutMs: number;
  private readonly listeners = new Set<() => void>();
  /** Prepared statements by SQL text: preparing costs about as much as running a small read. */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly stmt: {
    revisionOf: Database.Statement<[string], { revision: number }>;
    insert: Database.Statement<unknown[]>;
    head: Database.Statement<[number], { position: number | null }>;
  };
  /** One append in its own savepoint, and a group of them in one transaction (built once: building costs per flush). */
  private readonly appendInSavepoint: Database.Transaction<(item: PendingAppend) => AppendResult>;
  private readonly appendGroup: Database.Transaction<(items: readonly PendingAppend[], outcomes: Outcome[]) => void>;
  private readonly checkpointer: WalCheckpointer;
  /** Whether commits are put on disk before they are answered (`synchronous: 'FULL'`). */
  private readonly syncsCommits: boolean;
  private readonly walFlush: WalFlush;
  /** Every position up to this one is known to be on disk. */
  private syncedThrough = Number.MAX_SAFE_INTEGER;
  private unsynced: UnsyncedCommit[] = [];
  private syncing: Promise<void> | null = null;
  private syncRetryTimer: NodeJS.Timeout | null = null;
  private walFd: number | null = null;
  /** The first position the group being committed inserted. */
  private groupFirst: number | null = null;

  constructor(
    private readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    makePrivateDatabaseFile(file);
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // The commit's own fsync is ours, off the event loop (see the class comment); NORMAL still
    // syncs the WAL before a checkpoint copies it and the database file after.
    this.db.pragma('synchronous = NORMAL');
    this.syncsCommits = (options.synchronous ?? 'FULL') === 'FULL';
    this.walFlush = options.walFlush ?? NODE_WAL_FLUSH;
    this.db.pragma(`busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
    // The WAL is copied on a thread of its own (WalCheckpointer); the writer's checkpoint only finishes it.
    this.db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    this.pollMs = options.pollMs ?? 500;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 2000;
    if (options.maxPageCount !== undefined) this.db.pragma(`max_page_count = ${Math.floor(options.maxPageCount)}`);
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
      head: this.db.prepare('SELECT MAX(position) AS position FROM events WHERE position < ?'),
    };
    this.appendInSavepoint = this.db.transaction(this.appendOne);
    this.appendGroup = this.db.transaction((items: readonly PendingAppend[], outcomes: Outcome[]) => {
      for (const item of items) {
        try {
          // A one-event append needs no savepoint: a failed INSERT leaves nothing of itself behind.
          outcomes.push({ ok: item.events.length === 1 ? this.appendOne(item) : this.appendInSavepoint(item) });
        } catch (error) {
          // SQLite rolls the whole transaction back by itself on some errors (disk full,
          // I/O): then nothing of the group is written, and none of it may go on outside it.
          if (!this.db.inTransaction) throw error;
          outcomes.push({ error });
        }
      }
    });
    if (this.syncsCommits) {
      // What the WAL holds now may be commits a killed process never flushed.
      const fd = this.walDescriptor();
      if (fd !== null) this.walFlush.fdatasyncSync(fd);
      this.syncedThrough = seqOf(this.headSync(Number.MAX_SAFE_INTEGER));
    }
    this.checkpointer = new WalCheckpointer(file);
  }

  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    if (!this.db.open) return Promise.reject(new EventStoreUnavailableError('the event log is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ streamName, events, expected, resolve, reject, queuedAt: Date.now() });
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
        event.id ?? newEventId(),
        event.type,
        JSON.stringify(event.data ?? null),
        JSON.stringify(event.metadata ?? {}),
        event.recordedAt ?? now,
      );
      position = Number(info.lastInsertRowid);
      this.groupFirst ??= position;
    }
    return { nextExpectedRevision: revision, position: sqlitePosition(position) };
  };

  private flush(): void {
    this.flushScheduled = false;
    this.retryTimer = null;
    const items = this.queue;
    this.queue = [];
    const outcomes: Outcome[] = [];
    // Each append of several events runs in its own savepoint; the group commits (and fsyncs) once. IMMEDIATE
    // takes the write lock up front, without waiting: when another process holds it, the
    // group is tried again shortly (asynchronously, so the event loop keeps serving).
    try {
      // Not a statement prepared once: SQLite applies busy_timeout when the pragma is prepared.
      this.db.pragma('busy_timeout = 0');
      this.groupFirst = null;
      this.appendGroup.immediate(items, outcomes);
    } catch (error) {
      // better-sqlite3 rolled back whatever was still open: nothing of the group is stored.
      if (isLocked(error)) return this.retryLater(items, error);
      const failure = unavailable(error, this.db.open);
      for (const item of items) item.reject(failure);
      return;
    } finally {
      if (this.db.open) this.db.pragma(`busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
    }
    const answers: [PendingAppend, AppendResult][] = [];
    items.forEach((item, i) => {
      const outcome = outcomes[i];
      if ('ok' in outcome) answers.push([item, outcome.ok]);
      else item.reject(unavailable(outcome.error, true));
    });
    const first = this.groupFirst;
    if (first === null || answers.length === 0) return;
    if (!this.syncsCommits) {
      for (const [item, result] of answers) item.resolve(result);
      this.notifyAppended();
      return;
    }
    const last = answers.reduce<number>((max, [, result]) => Math.max(max, seqOf(result.position)), first);
    this.unsynced.push({ first, last, answers });
    this.syncWal();
  }

  /** What a read of the log may return: positions below the first commit not yet on disk. */
  private get readableBelow(): number {
    return this.unsynced.length ? this.unsynced[0].first : Number.MAX_SAFE_INTEGER;
  }

  /**
   * Puts every commit so far on disk with one `fdatasync` of the WAL (commits made meanwhile
   * wait for the next one), then answers their appends and shows them to readers of the log.
   * A failed flush answers that the change may or may not be saved, the truth after a failed
   * fsync; its commits stay hidden until a later flush succeeds (retried by itself).
   */
  private syncWal(): void {
    if (this.syncing || this.syncRetryTimer || this.unsynced.length === 0) return;
    const covered = this.unsynced.length;
    let finished!: () => void;
    const syncing = new Promise<void>((resolve) => (finished = resolve));
    this.syncing = syncing;
    // Set before the flush starts: a flush may also call back at once.
    const done = (error: NodeJS.ErrnoException | null) => {
      if (this.syncing === syncing) this.syncing = null;
      finished();
      this.afterSync(covered, error);
    };
    try {
      const fd = this.walDescriptor();
      if (fd === null) done(null);
      else this.walFlush.fdatasync(fd, done);
    } catch (error) {
      done(error as NodeJS.ErrnoException);
    }
  }

  /** The WAL file's descriptor, opened once; null while there is no WAL file (nothing to flush). */
  private walDescriptor(): number | null {
    if (this.walFd === null) {
      try {
        this.walFd = openSync(`${this.file}-wal`, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    }
    return this.walFd;
  }

  /**
   * Before a read returns positions up to `position`: those beyond what is known to be on disk
   * are another process's commits, perhaps not flushed yet; flushing the WAL puts them there.
   */
  private ensureOnDisk(position: number): void {
    if (position <= this.syncedThrough) return;
    const fd = this.walDescriptor();
    try {
      if (fd !== null) this.walFlush.fdatasyncSync(fd);
    } catch (error) {
      throw new EventStoreUnavailableError(flushFailed(error), { cause: error });
    }
    this.syncedThrough = position;
  }

  private afterSync(covered: number, error: NodeJS.ErrnoException | null): void {
    if (error) {
      const failure = new AppendOutcomeUnknownError(flushFailed(error), { cause: error });
      for (const commit of this.unsynced.slice(0, covered)) for (const [item] of commit.answers.splice(0)) item.reject(failure);
      if (this.db.open) this.syncRetryTimer = setTimeout(() => ((this.syncRetryTimer = null), this.syncWal()), SYNC_RETRY_MS);
      return;
    }
    for (const commit of this.unsynced.splice(0, covered)) {
      this.syncedThrough = Math.max(this.syncedThrough, commit.last);
      for (const [item, result] of commit.answers) item.resolve(result);
    }
    this.notifyAppended();
    this.syncWal();
  }

  private notifyAppended(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Another process holds the write lock: fail what waited long enough, try the rest again soon. */
  private retryLater(items: PendingAppend[], error: unknown): void {
    const now = Date.now();
    const waiting = items.filter((item) => {
      if (now - item.queuedAt < this.lockTimeoutMs) return true;
      item.reject(unavailable(error, true));
      return false;
    });
    this.queue = [...waiting, ...this.queue];
    if (this.queue.length === 0 || this.flushScheduled) return;
    this.flushScheduled = true;
    this.retryTimer = setTimeout(() => this.flush(), LOCK_RETRY_MS);
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    try {
      return this.readStreamSync(streamName, options);
    } catch (error) {
      throw unavailable(error, this.db.open);
    }
  }

  /** `below`: a subscription's read stops short of commits not yet on disk; a command's does not. */
  private readStreamSync(streamName: string, options: ReadStreamOptions, below = Number.MAX_SAFE_INTEGER): RecordedEvent[] {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const rows = this.prepared(
      `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision ${backwards ? '<=' : '>='} ? AND position < ? ORDER BY revision ${backwards ? 'DESC' : 'ASC'} LIMIT CAST(? AS INTEGER)`,
      'raw',
    ).all(streamName, from, below, options.maxCount ?? -1) as Row[];
    if (below !== Number.MAX_SAFE_INTEGER && rows.length) this.ensureOnDisk(Math.max(rows[0][0], rows[rows.length - 1][0]));
    return rows.map(toRecorded);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    try {
      return this.readAllSync(seqOf(options.after), options.maxCount ?? this.pageSize, options.filter);
    } catch (error) {
      throw unavailable(error, this.db.open);
    }
  }

  private readAllSync(afterSeq: number, limit: number, filter?: LogFilter): RecordedEvent[] {
    const clauses = ['position > ?', 'position < ?'];
    const params: unknown[] = [afterSeq, this.readableBelow];
    if (filter?.eventTypes?.length) {
      clauses.push(`type IN (${filter.eventTypes.map(() => '?').join(', ')})`);
      params.push(...filter.eventTypes);
    }
    if (filter?.streamPrefixes?.length) {
      clauses.push(`(${filter.streamPrefixes.map(() => 'substr(stream, 1, ?) = ?').join(' OR ')})`);
      for (const p of filter.streamPrefixes) params.push(p.length, p);
    }
    const texts = this.prepared(
      `SELECT ${EVENT_AS_JSON} FROM events WHERE ${clauses.join(' AND ')} ORDER BY position ASC LIMIT CAST(? AS INTEGER)`,
      'pluck',
    ).all(...params, limit) as string[];
    let events: RecordedEvent[];
    if (texts.length <= TEXTS_PER_PARSE) {
      events = texts.length ? (JSON.parse(`[${texts.join(',')}]`) as RecordedEvent[]) : [];
    } else {
      events = [];
      for (let i = 0; i < texts.length; i += TEXTS_PER_PARSE) {
        for (const event of JSON.parse(`[${texts.slice(i, i + TEXTS_PER_PARSE).join(',')}]`) as RecordedEvent[]) events.push(event);
      }
    }
    if (events.length) this.ensureOnDisk(seqOf(events[events.length - 1].position));
    return events;
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

  async headPosition(): Promise<LogPosition | null> {
    try {
      const head = this.headSync(this.readableBelow);
      if (head) this.ensureOnDisk(seqOf(head));
      return head;
    } catch (error) {
      throw unavailable(error, this.db.open);
    }
  }

  private headSync(below: number): LogPosition | null {
    const head = this.stmt.head.get(below)?.position;
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
      (last) => this.readStreamSync(streamName, { fromRevision: (last ? last.revision : start) + 1, maxCount: this.pageSize }, this.readableBelow),
      (signal) => this.onAppend(signal.ring),
      this.pollMs,
    );
  }

  private onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Answers every commit made: on disk, or (a flush that fails now) perhaps not. */
  private async syncBeforeClose(): Promise<void> {
    while (this.syncing) await this.syncing;
    if (this.syncRetryTimer) clearTimeout(this.syncRetryTimer);
    this.syncRetryTimer = null;
    if (this.unsynced.length) {
      let error: NodeJS.ErrnoException | null = null;
      try {
        const fd = this.walDescriptor();
        if (fd !== null) this.walFlush.fdatasyncSync(fd);
      } catch (e) {
        error = e as NodeJS.ErrnoException;
      }
      this.afterSync(this.unsynced.length, error);
      if (this.syncRetryTimer) clearTimeout(this.syncRetryTimer);
    }
    if (this.walFd !== null) closeSync(this.walFd);
    this.walFd = null;
  }

  /** The page limit and the free space of the log's volume, read on this connection (its `max_page_count` applies). */
  spaceLeft(): Promise<SpaceLeft> {
    if (!this.db.open) return Promise.reject(new EventStoreUnavailableError('the event log is closed'));
    return sqliteSpaceLeft(this.db, this.file);
  }

  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.queue.length && this.db.open) this.flush();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    // Appends still waiting for another process's lock are not written.
    for (const item of this.queue.splice(0)) item.reject(new EventStoreUnavailableError('the event log was closed'));
    await this.syncBeforeClose();
    await this.checkpointer.close();
    if (this.db.open) this.db.close();
  }
}

/**
 * A log read (a rebuild's first cost) builds each event's JSON text in SQLite and parses the
 * page with one JSON.parse: about a tenth less CPU per event than a row of columns turned into
 * an object with two JSON.parse calls (measured on a 400,000-event log). `data` and `metadata` are
 * stored as JSON texts (written by JSON.stringify), so they are spliced in as they are; the
 * keys and their order are those of `toRecorded`.
 */
const EVENT_AS_JSON = `'{"id":' || json_quote(event_id) || ',"streamName":' || json_quote(stream) || ',"revision":' || revision ||
  ',"position":"' || printf('%0${POSITION_WIDTH}d', position) || '","type":' || json_quote(type) || ',"data":' || data ||
  ',"metadata":' || metadata || ',"recordedAt":' || json_quote(recorded_at) || '}'`;
/** Events per JSON.parse: bounds the joined text (V8 caps a string at about 512 MB) whatever the page and event sizes. */
const TEXTS_PER_PARSE = 1000;

const toRecorded = ([position, stream, revision, eventId, type, data, metadata, recordedAt]: Row): RecordedEvent => ({
  id: eventId,
  streamName: stream,
  revision,
  position: sqlitePosition(position),
  type,
  data: JSON.parse(data),
  metadata: JSON.parse(metadata),
  recordedAt,
});

/** Why a flush of the WAL failed, in words fit for a client. */
const flushFailed = (error: unknown): string =>
  `the event log could not be flushed to disk (${(error as NodeJS.ErrnoException | null)?.code ?? messageOf(error)})`;

const sqliteCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
};

const isLocked = (error: unknown): boolean => /^SQLITE_(BUSY|LOCKED)/.test(sqliteCode(error) ?? '');

/**
 * SQLite's storage failures as the port's "unavailable, nothing written", with a reason fit
 * for a client (SQLite's own messages are, but its extended codes say more to an operator).
 * Other errors (a bug, a constraint) stay as they are.
 */
function unavailable(error: unknown, open: boolean): unknown {
  if (error instanceof EventStoreUnavailableError) return error;
  if (!open) return new EventStoreUnavailableError('the event log is closed', { cause: error });
  const code = sqliteCode(error);
  if (!code) return error;
  const reason = code.startsWith('SQLITE_FULL')
    ? 'the disk is full'
    : code.startsWith('SQLITE_READONLY')
      ? 'the event log is read-only'
      : isLocked(error)
        ? 'the event log is locked by another process'
        : /^SQLITE_(IOERR|CANTOPEN|PERM|PROTOCOL|NOMEM|NOLFS)/.test(code)
          ? `the event log could not be written or read (${code})`
          : /^SQLITE_(CORRUPT|NOTADB)/.test(code)
            ? `the event log file is damaged (${code})`
            : undefined;
  return reason ? new EventStoreUnavailableError(reason, { cause: error }) : error;
}
