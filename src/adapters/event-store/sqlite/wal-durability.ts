import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { AppendOutcomeUnknownError, AppendResult, EventStoreUnavailableError } from '../../../shared/ports/event-store.port';
import { flushFailed } from './sqlite-errors';

/** Puts a file's written data on disk: off the event loop for commits, at once for another process's. */
export interface WalFlush {
  fdatasync(fd: number, done: (error: NodeJS.ErrnoException | null) => void): void;
  fdatasyncSync(fd: number): void;
}
export const NODE_WAL_FLUSH: WalFlush = { fdatasync, fdatasyncSync };

/** Whoever waits for an append's answer. */
export interface AppendWaiter {
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** One commit: the positions it wrote and the appends it answers. */
export interface Commit {
  /** Its first position (or one before it): reads of the log stop short of it until it is on disk. */
  readonly first: number;
  readonly last: number;
  /** Answered once it is on disk (emptied when told it may not be). */
  answers: [AppendWaiter, AppendResult][];
}

export interface WalDurabilityOptions {
  /** `false` (`synchronous: 'NORMAL'`): commits are answered and shown at once, flushed by SQLite's checkpoints only. */
  readonly syncsCommits: boolean;
  readonly walFlush?: WalFlush;
  /** Called each time commits become visible to readers of the log. */
  readonly onVisible: () => void;
  /** Before flushing the WAL again after a flush failed. */
  readonly retryMs?: number;
}

/**
 * Which of the log's commits are on disk, and the flushes that put them there.
 *
 * SQLite commits without syncing (`synchronous = NORMAL`); `fdatasync` of the WAL file on
 * libuv's thread pool then puts the commit on disk before its appends are answered, while the
 * event loop serves other requests and commits the next group (measured: 14 % more sends per
 * second to one busy room than with SQLite's own fsync inside the commit). Until then the
 * commit is hidden from the log's readers (`readableBelow`): projections and subscribers see
 * only what a power cut cannot take back. Commits another process made (a projector worker
 * reads what API processes write) are flushed by the reader before it returns them
 * (`ensureOnDisk`), and so is whatever the WAL holds at open (a process killed between a
 * commit and its flush).
 */
export class WalDurability {
  private readonly walFlush: WalFlush;
  private readonly retryMs: number;
  /** Every position up to this one is known to be on disk. */
  private syncedThrough = Number.MAX_SAFE_INTEGER;
  private unsynced: Commit[] = [];
  private syncing: Promise<void> | null = null;
  private syncRetryTimer: NodeJS.Timeout | null = null;
  private walFd: number | null = null;
  private closing = false;

  /** `walFile`: the database's WAL file (`<file>-wal`). */
  constructor(
    private readonly walFile: string,
    private readonly options: WalDurabilityOptions,
  ) {
    this.walFlush = options.walFlush ?? NODE_WAL_FLUSH;
    this.retryMs = options.retryMs ?? 1_000;
  }

  /**
   * At open: what the WAL holds may be commits a killed process never flushed. Flushes it, then
   * counts everything up to the log's head (read after the flush) as on disk.
   */
  flushAtOpen(head: () => number): void {
    if (!this.options.syncsCommits) return;
    const fd = this.walDescriptor();
    if (fd !== null) this.walFlush.fdatasyncSync(fd);
    this.syncedThrough = head();
  }

  /** Reads of the log return only positions below this one: those before the first commit not yet on disk. */
  get readableBelow(): number {
    return this.unsynced.length ? this.unsynced[0].first : Number.MAX_SAFE_INTEGER;
  }

  /** A commit was made: its appends are answered, and it is shown, once it is on disk. */
  committed(commit: Commit): void {
    if (!this.options.syncsCommits) {
      for (const [waiter, result] of commit.answers) waiter.resolve(result);
      this.options.onVisible();
      return;
    }
    this.unsynced.push(commit);
    this.syncWal();
  }

  /**
   * Before a read returns positions up to `position`: those beyond what is known to be on disk
   * are another process's commits, perhaps not flushed yet; flushing the WAL puts them there.
   */
  ensureOnDisk(position: number): void {
    if (position <= this.syncedThrough) return;
    const fd = this.walDescriptor();
    try {
      if (fd !== null) this.walFlush.fdatasyncSync(fd);
    } catch (error) {
      throw new EventStoreUnavailableError(flushFailed(error), { cause: error });
    }
    this.syncedThrough = position;
  }

  /** Answers every commit made: on disk, or (a flush that fails now) perhaps not. Then lets go of the WAL file. */
  async close(): Promise<void> {
    this.closing = true;
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
    }
    if (this.walFd !== null) closeSync(this.walFd);
    this.walFd = null;
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

  private afterSync(covered: number, error: NodeJS.ErrnoException | null): void {
    if (error) {
      const failure = new AppendOutcomeUnknownError(flushFailed(error), { cause: error });
      for (const commit of this.unsynced.slice(0, covered)) for (const [waiter] of commit.answers.splice(0)) waiter.reject(failure);
      if (!this.closing) this.syncRetryTimer = setTimeout(() => ((this.syncRetryTimer = null), this.syncWal()), this.retryMs);
      return;
    }
    for (const commit of this.unsynced.splice(0, covered)) {
      this.syncedThrough = Math.max(this.syncedThrough, commit.last);
      for (const [waiter, result] of commit.answers) waiter.resolve(result);
    }
    this.options.onVisible();
    this.syncWal();
  }

  /** The WAL file's descriptor, opened once; null while there is no WAL file (nothing to flush). */
  private walDescriptor(): number | null {
    if (this.walFd === null) {
      try {
        this.walFd = openSync(this.walFile, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    }
    return this.walFd;
  }
}

