import { growingLru } from '../../../shared/growing-lru';
import type Database from 'better-sqlite3';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import {
  AppendResult,
  EventStore,
  EventStoreUnavailableError,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SpaceLeft,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
} from '../../../shared/ports/event-store.port';
import { WalCheckpointer } from '../../shared/sqlite-wal-checkpointer';
import { sqliteSpaceLeft } from '../../shared/sqlite-space-left';
import { GroupCommit } from './group-commit';
import { AppendDoorbell, FeedSource, feedOfAll, feedOfStream } from './log-feeds';
import { isSqlitePosition, seqOf } from './positions';
import { LogReads } from './reads';
import { openEventLogDatabase } from './schema';
import { asUnavailable } from './sqlite-errors';
import { Commit, WalDurability, WalFlush } from './wal-durability';

export type { WalFlush } from './wal-durability';
export { sqlitePosition } from './positions';

/** Streams whose last own append a store remembers (as many as the write side caches states of). */
const OWN_APPENDS_REMEMBERED = 10_000;

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
  /**
   * For a reader beside the process that writes the log (the embedded server's projector
   * thread): reads stop at the head that process reports as on disk, and its reports wake
   * subscriptions at once. Such a store appends nothing.
   */
  readonly reportedHead?: ReportedHead;
}

/** The newest position another connection's writer has made durable, and word each time it moves. */
export interface ReportedHead {
  /** Every position up to this one (a sequence number; 0: none) is on disk. */
  readonly through: number;
  onMoved(listener: () => void): () => void;
}

/**
 * The embedded event log: one SQLite file in WAL mode, at the newest schema version (schema.ts).
 * Appends are grouped into one transaction (GroupCommit) and answered once on disk
 * (WalDurability, which also hides commits not yet on disk from the log's readers: a command's
 * read of its stream sees them, `readAll`, `headPosition` and subscriptions do not). Reads are
 * LogReads' SQL; subscriptions are pages of those reads woken by the doorbell (log-feeds.ts);
 * SQLite's failures reach callers as the port's errors (sqlite-errors.ts).
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly reads: LogReads;
  private readonly commits: GroupCommit;
  private readonly durability: WalDurability;
  private readonly feeds: FeedSource;
  private readonly checkpointer: WalCheckpointer;
  private readonly reportedHead: ReportedHead | null;
  private readonly stopFollowingHead: () => void;
  /** SQLite's count of commits by other connections to the file (`PRAGMA data_version`), and the last one seen. */
  private readonly dataVersion: Database.Statement;
  private seenDataVersion: unknown;
  /** `data_version` as `streamVersion` last read it, in the current turn of the event loop (undefined: not yet read in it). */
  private dataVersionOfTurn: number | undefined;
  /** Commits made through this connection (which do not change its `data_version`), counted. */
  private ownCommits = 0;
  /**
   * The number of the last of them that appended to a stream, for the streams appended to most
   * recently; a stream forgotten here counts as appended to at `forgottenUpTo` (the newest
   * number forgotten), which can only make it look changed more often.
   */
  private readonly ownAppends = growingLru<string, number>(OWN_APPENDS_REMEMBERED, {
    dispose: (commit, _stream, reason) => {
      if (reason === 'evict') this.forgottenUpTo = Math.max(this.forgottenUpTo, commit);
    },
  });
  private forgottenUpTo = 0;

  constructor(
    private readonly file: string,
    options: SqliteEventStoreOptions = {},
  ) {
    this.db = openEventLogDatabase(file, options);
    const doorbell = new AppendDoorbell();
    this.feeds = { doorbell, pollMs: options.pollMs ?? 500, pageSize: options.pageSize ?? 500 };
    this.reads = new LogReads(this.db);
    this.durability = new WalDurability(`${file}-wal`, {
      syncsCommits: (options.synchronous ?? 'FULL') === 'FULL',
      walFlush: options.walFlush,
      onVisible: () => doorbell.ring(),
    });
    this.commits = new GroupCommit(
      this.db,
      (commit, streams) => this.durability.committed(this.stamped(commit, streams)),
      options.lockTimeoutMs ?? 2000,
    );
    try {
      this.durability.flushAtOpen(() => seqOf(this.reads.headBelow(Number.MAX_SAFE_INTEGER)));
    } catch (error) {
      this.db.close();
      throw error;
    }
    this.checkpointer = new WalCheckpointer(file);
    this.reportedHead = options.reportedHead ?? null;
    this.stopFollowingHead = this.reportedHead ? this.reportedHead.onMoved(() => doorbell.ring()) : () => undefined;
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.seenDataVersion = this.dataVersion.get();
  }

  /**
   * Whether another connection wrote the file since the last call: SQLite changes `data_version`
   * for every other connection's commit. A checkpoint by the checkpoint thread's connection
   * changes it too, so this says yes more often than needed, never less.
   */
  appendedElsewhere(): boolean {
    if (!this.db.open) return true;
    const now = this.dataVersion.get();
    const changed = now !== this.seenDataVersion;
    this.seenDataVersion = now;
    return changed;
  }

  /** Notes the streams a commit of this connection appended to, and tells each append its stream's version after it (where it was the stream's only one in the commit). */
  private stamped(commit: Commit, streams: readonly string[]): Commit {
    const number = ++this.ownCommits;
    const appends = new Map<string, number>();
    for (const stream of streams) {
      this.ownAppends.set(stream, number);
      appends.set(stream, (appends.get(stream) ?? 0) + 1);
    }
    const version = `${this.dataVersion.get() as number}.${number}`;
    commit.answers.forEach((answer, i) => {
      if (appends.get(streams[i]) === 1) answer[1] = { ...answer[1], streamVersion: version };
    });
    return commit;
  }

  /**
   * Other connections' commits to the file (`data_version`, whatever streams they wrote; a
   * checkpoint counts too, which only makes it change more often) and this connection's last
   * commit to the stream: unchanged, nothing was appended to it in between.
   *
   * `data_version` is read once per turn of the event loop, not at every call: each read is a
   * read transaction (the WAL index's header and its shared-memory locks, two `fcntl` calls), and
   * a send loads eight or nine streams, most of them in a turn shared with other sends (about 20 µs
   * of the request thread's CPU per send, measured). So another connection's commit shows from
   * the next turn at the latest, as the write side's states already assume (StreamStates: a
   * state read in a turn is served all that turn without asking); this connection's own appends
   * show at once (`ownAppends`).
   */
  streamVersion(streamName: string): string | undefined {
    if (!this.db.open) return undefined;
    return `${this.otherConnectionsVersion()}.${this.ownAppends.get(streamName) ?? this.forgottenUpTo}`;
  }

  private otherConnectionsVersion(): number {
    if (this.dataVersionOfTurn === undefined) {
      this.dataVersionOfTurn = this.dataVersion.get() as number;
      setImmediate(() => (this.dataVersionOfTurn = undefined));
    }
    return this.dataVersionOfTurn;
  }

  /** Its positions are sqlitePosition's digits: a checkpoint of EventStoreDB's, or a position mistyped into a replay, is not one. */
  recognizes(position: LogPosition): boolean {
    return isSqlitePosition(position);
  }

  /**
   * The newest position readers of this log may see (on disk), and word each time it moves:
   * at once for this connection's commits, within `pollMs` for another process's.
   */
  watchVisibleHead(listener: (head: number) => void): () => void {
    let reported = -1;
    const report = () => {
      let head: number;
      try {
        head = this.visibleHead();
      } catch {
        return; // A failing read: the next commit or poll reports again.
      }
      if (head !== reported) listener((reported = head));
    };
    const offDoorbell = this.feeds.doorbell.listen(report);
    const timer = setInterval(report, this.feeds.pollMs);
    timer.unref();
    report();
    return () => {
      offDoorbell();
      clearInterval(timer);
    };
  }

  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    if (this.reportedHead) return Promise.reject(new Error('this connection reads the log another one writes: it appends nothing'));
    if (!this.db.open) return Promise.reject(new EventStoreUnavailableError('the event log is closed'));
    return this.commits.append(streamName, events, expected);
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    // A command reads its stream's commits before they are on disk; a reader of another's writes does not.
    return this.storageErrors(() => this.reads.stream(streamName, options, this.reportedHead ? this.readableBelow() : Number.MAX_SAFE_INTEGER));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.storageErrors(() => this.visibleAll(seqOf(options.after), options.maxCount ?? this.feeds.pageSize, options.filter));
  }

  async headPosition(): Promise<LogPosition | null> {
    return this.storageErrors(() => {
      const head = this.reads.headBelow(this.readableBelow());
      if (head) this.ensureOnDisk(seqOf(head));
      return head;
    });
  }

  /** A binary search over positions (LogReads.firstRecordedAtOrAfter), never a read of the log through. */
  async positionBeforeTime(time: string): Promise<{ before: LogPosition | null }> {
    return this.storageErrors(() => {
      const below = this.readableBelow();
      const first = this.reads.firstRecordedAtOrAfter(time, below);
      const before = this.reads.headBelow(first ?? below);
      if (before) this.ensureOnDisk(seqOf(before));
      return { before };
    });
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): LogSubscription {
    return feedOfAll(this.feeds, seqOf(options.after), (afterSeq, limit) => this.visibleAll(afterSeq, limit, options.filter));
  }

  subscribeToStream(streamName: string, options: SubscribeToStreamOptions = {}): LogSubscription {
    return feedOfStream(this.feeds, options.afterRevision ?? -1, (fromRevision, maxCount) => {
      const events = this.reads.stream(streamName, { fromRevision, maxCount }, this.readableBelow());
      if (events.length) this.ensureOnDisk(Math.max(seqOf(events[0].position), seqOf(events[events.length - 1].position)));
      return events;
    });
  }

  /** The page limit and the free space of the log's volume, read on this connection (its `max_page_count` applies). */
  spaceLeft(): Promise<SpaceLeft> {
    if (!this.db.open) return Promise.reject(new EventStoreUnavailableError('the event log is closed'));
    return sqliteSpaceLeft(this.db, this.file);
  }

  async close(): Promise<void> {
    this.stopFollowingHead();
    this.commits.close();
    await this.durability.close();
    await this.checkpointer.close();
    if (this.db.open) this.db.close();
  }

  /** The log after `afterSeq` as its readers may see it: what is on disk, another process's commits flushed first. */
  private visibleAll(afterSeq: number, limit: number, filter?: LogFilter): RecordedEvent[] {
    const events = this.reads.all(afterSeq, limit, this.readableBelow(), filter);
    if (events.length) this.ensureOnDisk(seqOf(events[events.length - 1].position));
    return events;
  }

  /** The newest position on disk that readers may see, 0 for an empty log. */
  private visibleHead(): number {
    const head = this.reads.headBelow(this.readableBelow());
    if (!head) return 0;
    this.ensureOnDisk(seqOf(head));
    return seqOf(head);
  }

  /** Reads return positions below this one: what is on disk (as the writing connection reported it, for a reader beside it). */
  private readableBelow(): number {
    return this.reportedHead ? this.reportedHead.through + 1 : this.durability.readableBelow;
  }

  /** What the writer beside this reader reported is on disk already; anything else is flushed first. */
  private ensureOnDisk(position: number): void {
    if (this.reportedHead && position <= this.reportedHead.through) return;
    this.durability.ensureOnDisk(position);
  }

  /** Runs a read, its storage failures as the port's "unavailable". */
  private storageErrors<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw asUnavailable(error, this.db.open);
    }
  }
}
