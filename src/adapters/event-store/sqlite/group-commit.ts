import type Database from 'better-sqlite3';
import { AppendResult, EventStoreUnavailableError, EventToAppend, ExpectedRevision } from '../../../shared/ports/event-store.port';
import { StoredAppend, StreamAppender } from './append-to-stream';
import { READ_BUSY_TIMEOUT_MS } from './schema';
import { asUnavailable, isLocked } from './sqlite-errors';
import { seqOf } from './positions';
import { AppendWaiter, Commit } from './wal-durability';

interface PendingAppend extends AppendWaiter {
  readonly streamName: string;
  readonly events: readonly EventToAppend[];
  readonly expected: ExpectedRevision;
  /** When it was queued: it waits for another process's write lock until `lockTimeoutMs` after. */
  readonly queuedAt: number;
}

type Outcome = { ok: StoredAppend } | { error: unknown };

/** Between two tries for the write lock another process holds. */
const LOCK_RETRY_MS = 20;

/**
 * The log's writer: appends that arrive while the event loop is busy are grouped into one
 * transaction (and so one fsync, see WalDurability); each append still checks its own expected
 * revision and fails alone. IMMEDIATE takes the write lock up front, without waiting: when
 * another process holds it (the admin CLI, a tool writing the same file; they hold it for
 * milliseconds), the group is tried again shortly, asynchronously, so the event loop keeps
 * serving, and an append that waited `lockTimeoutMs` fails as "locked".
 *
 * A commit's appends are handed to `committed` with their results, to be answered by it; those
 * that failed are answered here.
 */
export class GroupCommit {
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** One append in its own savepoint, and a group of them in one transaction (built once: building costs per flush). */
  private readonly appendInSavepoint: Database.Transaction<(item: PendingAppend) => StoredAppend>;
  private readonly appendGroup: Database.Transaction<(items: readonly PendingAppend[], outcomes: Outcome[]) => void>;

  constructor(
    private readonly db: Database.Database,
    /** Also told the streams the commit appended to. */
    private readonly committed: (commit: Commit, streams: readonly string[]) => void,
    private readonly lockTimeoutMs: number,
  ) {
    const appender = new StreamAppender(db);
    const appendOne = (item: PendingAppend) => appender.append(item.streamName, item.events, item.expected);
    this.appendInSavepoint = db.transaction(appendOne);
    this.appendGroup = db.transaction((items: readonly PendingAppend[], outcomes: Outcome[]) => {
      for (const item of items) {
        try {
          // A one-event append needs no savepoint: a failed INSERT leaves nothing of itself behind.
          outcomes.push({ ok: item.events.length === 1 ? appendOne(item) : this.appendInSavepoint(item) });
        } catch (error) {
          // SQLite rolls the whole transaction back by itself on some errors (disk full,
          // I/O): then nothing of the group is written, and none of it may go on outside it.
          if (!db.inTransaction) throw error;
          outcomes.push({ error });
        }
      }
    });
  }

  /** Queues an append for the next group; settled by `committed` once its commit is answered. */
  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ streamName, events, expected, resolve, reject, queuedAt: Date.now() });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now; appends still waiting for another process's lock are not written. */
  close(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.queue.length && this.db.open) this.flush();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const item of this.queue.splice(0)) item.reject(new EventStoreUnavailableError('the event log was closed'));
  }

  private flush(): void {
    this.flushScheduled = false;
    this.retryTimer = null;
    const items = this.queue;
    this.queue = [];
    const outcomes: Outcome[] = [];
    try {
      // Not a statement prepared once: SQLite applies busy_timeout when the pragma is prepared.
      // `exec` prepares and runs it without the Statement object `pragma()` builds, which cost
      // 6-8 times as much (two per commit, on the request thread).
      this.db.exec('PRAGMA busy_timeout = 0');
      this.appendGroup.immediate(items, outcomes);
    } catch (error) {
      // better-sqlite3 rolled back whatever was still open: nothing of the group is stored.
      if (isLocked(error)) return this.retryLater(items, error);
      const failure = asUnavailable(error, this.db.open);
      for (const item of items) item.reject(failure);
      return;
    } finally {
      if (this.db.open) this.db.exec(`PRAGMA busy_timeout = ${READ_BUSY_TIMEOUT_MS}`);
    }
    const answers: [PendingAppend, AppendResult][] = [];
    let first = Number.MAX_SAFE_INTEGER;
    items.forEach((item, i) => {
      const outcome = outcomes[i];
      if ('ok' in outcome) {
        answers.push([item, outcome.ok.result]);
        first = Math.min(first, outcome.ok.first);
      } else item.reject(asUnavailable(outcome.error, true));
    });
    if (answers.length === 0) return;
    const last = answers.reduce<number>((max, [, result]) => Math.max(max, seqOf(result.position)), first);
    this.committed({ first, last, answers }, answers.map(([item]) => item.streamName));
  }

  /** Another process holds the write lock: fail what waited long enough, try the rest again soon. */
  private retryLater(items: PendingAppend[], error: unknown): void {
    const now = Date.now();
    const waiting = items.filter((item) => {
      if (now - item.queuedAt < this.lockTimeoutMs) return true;
      item.reject(asUnavailable(error, true));
      return false;
    });
    this.queue = [...waiting, ...this.queue];
    if (this.queue.length === 0 || this.flushScheduled) return;
    this.flushScheduled = true;
    this.retryTimer = setTimeout(() => this.flush(), LOCK_RETRY_MS);
  }
}
