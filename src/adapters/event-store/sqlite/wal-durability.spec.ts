import { fdatasyncSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppendOutcomeUnknownError, AppendResult, EventStoreUnavailableError } from '../../../shared/ports/event-store.port';
import { sqlitePosition } from './positions';
import { AppendWaiter, Commit, WalDurability, WalFlush } from './wal-durability';

/**
 * The tracker alone, on a real file standing for the WAL: which commits readers may see,
 * when appends are answered, and which flushes run. Its flushes are held by the test and let
 * go (or failed) one by one, so every step is decided by the test, never by timing.
 */
type Done = (error: NodeJS.ErrnoException | null) => void;

class HeldFlushes implements WalFlush {
  readonly held: { fd: number; done: Done }[] = [];
  atOnce = 0;
  failAtOnce: NodeJS.ErrnoException | null = null;
  private called: (() => void) | null = null;

  fdatasync(fd: number, done: Done): void {
    this.held.push({ fd, done });
    this.called?.();
  }

  fdatasyncSync(fd: number): void {
    this.atOnce++;
    if (this.failAtOnce) throw this.failAtOnce;
    fdatasyncSync(fd);
  }

  /** Resolves once a flush is held (at once if one is). */
  flushCalled(): Promise<void> {
    if (this.held.length) return Promise.resolve();
    return new Promise((resolve) => (this.called = () => ((this.called = null), resolve())));
  }

  /** Ends the oldest held flush: on disk, or failed with `error`. */
  finish(error: NodeJS.ErrnoException | null = null): void {
    const flush = this.held.shift();
    if (!flush) throw new Error('no flush is running');
    flush.done(error);
  }
}

/** An append waiting for its answer, and what it got. */
class Waiter implements AppendWaiter {
  answer: { result: AppendResult } | { error: unknown } | null = null;
  resolve(result: AppendResult): void {
    this.answer = { result };
  }
  reject(error: unknown): void {
    this.answer = { error };
  }
}

/** A commit of positions `first`…`last`, one waiter per position. */
function commitOf(first: number, last: number): { commit: Commit; waiters: Waiter[] } {
  const waiters: Waiter[] = [];
  const answers: Commit['answers'] = [];
  for (let p = first; p <= last; p++) {
    const waiter = new Waiter();
    waiters.push(waiter);
    answers.push([waiter, { nextExpectedRevision: p, position: sqlitePosition(p) }]);
  }
  return { commit: { first, last, answers }, waiters };
}

const eio = (): NodeJS.ErrnoException => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

describe('WalDurability', () => {
  let dir: string;
  let wal: string;
  let flushes: HeldFlushes;
  let shown: number;
  let tracker: WalDurability;
  const open = (syncsCommits = true, retryMs = 1_000) =>
    (tracker = new WalDurability(wal, { syncsCommits, walFlush: flushes, onVisible: () => shown++, retryMs }));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-wal-durability-'));
    wal = join(dir, 'events.sqlite-wal');
    writeFileSync(wal, 'frames');
    flushes = new HeldFlushes();
    shown = 0;
  });
  afterEach(async () => {
    while (flushes.held.length) flushes.finish();
    await tracker.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hides a commit from readers and holds its answers until its flush is done, then answers and shows it', () => {
    open();
    const { commit, waiters } = commitOf(1, 2);
    tracker.committed(commit);
    expect(flushes.held).toHaveLength(1);
    expect(statSync(`/proc/self/fd/${flushes.held[0].fd}`).ino).toBe(statSync(wal).ino);
    expect(tracker.readableBelow).toBe(1);
    expect(waiters.map((w) => w.answer)).toEqual([null, null]);
    expect(shown).toBe(0);

    flushes.finish();
    expect(waiters.map((w) => w.answer)).toEqual([
      { result: { nextExpectedRevision: 1, position: sqlitePosition(1) } },
      { result: { nextExpectedRevision: 2, position: sqlitePosition(2) } },
    ]);
    expect(tracker.readableBelow).toBe(Number.MAX_SAFE_INTEGER);
    expect(shown).toBe(1);
  });

  it('runs one flush at a time: commits made during a flush wait for the next one, which covers them all', () => {
    open();
    const a = commitOf(1, 1);
    const b = commitOf(2, 2);
    const c = commitOf(3, 3);
    tracker.committed(a.commit);
    tracker.committed(b.commit);
    tracker.committed(c.commit);
    expect(flushes.held).toHaveLength(1);

    flushes.finish();
    expect(a.waiters[0].answer).not.toBeNull();
    expect([b.waiters[0].answer, c.waiters[0].answer]).toEqual([null, null]);
    expect(tracker.readableBelow).toBe(2);
    expect(flushes.held).toHaveLength(1);

    flushes.finish();
    expect([b.waiters[0].answer, c.waiters[0].answer]).not.toContain(null);
    expect(tracker.readableBelow).toBe(Number.MAX_SAFE_INTEGER);
    expect(shown).toBe(2);
  });

  it('answers "may or may not be saved" when a flush fails, keeps the commit hidden, and shows it once a flush tried again by itself succeeds', async () => {
    open(true, 1);
    const { commit, waiters } = commitOf(1, 1);
    tracker.committed(commit);
    flushes.finish(eio());
    const answer = waiters[0].answer as { error: unknown };
    expect(answer.error).toBeInstanceOf(AppendOutcomeUnknownError);
    expect((answer.error as AppendOutcomeUnknownError).reason).toBe('the event log could not be flushed to disk (EIO)');
    expect(tracker.readableBelow).toBe(1);
    expect(shown).toBe(0);

    await flushes.flushCalled();
    flushes.finish();
    expect(tracker.readableBelow).toBe(Number.MAX_SAFE_INTEGER);
    expect(shown).toBe(1);
    expect(waiters[0].answer).toBe(answer); // answered once
  });

  it('flushes another process\'s commits before they are read, once: positions beyond what it knows to be on disk', () => {
    open();
    tracker.flushAtOpen(() => 5);
    expect(flushes.atOnce).toBe(1);
    tracker.ensureOnDisk(5);
    expect(flushes.atOnce).toBe(1);
    tracker.ensureOnDisk(7);
    expect(flushes.atOnce).toBe(2);
    tracker.ensureOnDisk(6);
    tracker.ensureOnDisk(7);
    expect(flushes.atOnce).toBe(2);
    // Its own commits, once flushed, are known to be on disk too.
    tracker.committed(commitOf(8, 9).commit);
    flushes.finish();
    tracker.ensureOnDisk(9);
    expect(flushes.atOnce).toBe(2);
  });

  it('refuses a read whose flush fails as "unavailable", and flushes again at the next read', () => {
    open();
    tracker.flushAtOpen(() => 0);
    flushes.failAtOnce = eio();
    const refused = (() => {
      try {
        tracker.ensureOnDisk(1);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(EventStoreUnavailableError);
    expect((refused as EventStoreUnavailableError).reason).toBe('the event log could not be flushed to disk (EIO)');
    flushes.failAtOnce = null;
    tracker.ensureOnDisk(1);
    expect(flushes.atOnce).toBe(3);
  });

  it('flushes nothing at open when there is no WAL file, and answers commits at once while there is none', () => {
    rmSync(wal);
    open();
    tracker.flushAtOpen(() => 0);
    expect(flushes.atOnce).toBe(0);
    const { commit, waiters } = commitOf(1, 1);
    tracker.committed(commit);
    expect(flushes.held).toHaveLength(0);
    expect(waiters[0].answer).not.toBeNull();
    expect(shown).toBe(1);
  });

  it('with commits answered at commit (synchronous NORMAL): answers and shows at once, flushes nothing, ever', () => {
    open(false);
    tracker.flushAtOpen(() => 3);
    const { commit, waiters } = commitOf(4, 4);
    tracker.committed(commit);
    expect(waiters[0].answer).not.toBeNull();
    expect(shown).toBe(1);
    expect(tracker.readableBelow).toBe(Number.MAX_SAFE_INTEGER);
    tracker.ensureOnDisk(100);
    expect(flushes.atOnce + flushes.held.length).toBe(0);
  });

  it('at close, waits for the running flush and the one it starts for commits made meanwhile, answering every commit', async () => {
    open();
    const a = commitOf(1, 1);
    const b = commitOf(2, 2);
    tracker.committed(a.commit);
    tracker.committed(b.commit);
    let closed = false;
    const closing = tracker.close().then(() => (closed = true));
    flushes.finish();
    expect(a.waiters[0].answer).not.toBeNull();
    await flushes.flushCalled();
    expect([b.waiters[0].answer, closed]).toEqual([null, false]);
    flushes.finish();
    await closing;
    expect(b.waiters[0].answer).not.toBeNull();
    expect(flushes.atOnce).toBe(0);
  });

  it('at close, flushes at once a commit whose flush failed and waits to be tried again, and shows it', async () => {
    open();
    const { commit, waiters } = commitOf(1, 1);
    tracker.committed(commit);
    flushes.finish(eio());
    expect((waiters[0].answer as { error: unknown }).error).toBeInstanceOf(AppendOutcomeUnknownError);
    await tracker.close();
    expect(flushes.atOnce).toBe(1);
    expect(tracker.readableBelow).toBe(Number.MAX_SAFE_INTEGER);
    expect(shown).toBe(1);
  });

  it('at close, a failing flush answers "may or may not be saved" and is not tried again', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      open();
      const { commit, waiters } = commitOf(1, 1);
      tracker.committed(commit);
      flushes.failAtOnce = eio();
      const closed = tracker.close();
      flushes.finish(eio());
      await closed;
      expect((waiters[0].answer as { error: unknown }).error).toBeInstanceOf(AppendOutcomeUnknownError);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
