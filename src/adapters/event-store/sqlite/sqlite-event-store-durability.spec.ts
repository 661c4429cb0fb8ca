import Database from 'better-sqlite3';
import { fdatasync, fdatasyncSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppendOutcomeUnknownError, EventToAppend } from '../../../shared/ports/event-store.port';
import { RecordedEvent } from '../../../shared/domain/event';
import { SqliteEventStore } from './sqlite-event-store';
import { eventually, sleep } from '../../../../test/support/waiting';

/**
 * The log's fsync runs off the event loop: an append is answered once its commit is on disk,
 * and until then only a command's read of its stream sees it, never the log's readers
 * (projections, subscriptions), which must not show what a power cut could take back. The
 * flush is the real `fdatasync`, held or failed by the test at the moment it is called.
 */
type Done = (error: NodeJS.ErrnoException | null) => void;

const event = (n: number): EventToAppend => ({ type: 'Counted', data: { n }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } });

describe('SqliteEventStore puts a commit on disk before anyone sees it', () => {
  let dir: string;
  let store: SqliteEventStore;
  /** Flushes called and not yet let go, in order. */
  let held: { fd: number; done: Done }[];
  let failNext: NodeJS.ErrnoException | null;
  let syncs: number;
  /** Flushes made at once: at open, and for another process's commits. */
  let flushedAtOnce: number;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-durable-'));
    held = [];
    failNext = null;
    syncs = 0;
    flushedAtOnce = 0;
    store = new SqliteEventStore(join(dir, 'events.sqlite'), {
      pollMs: 20,
      walFlush: {
        fdatasync: (fd, done) => {
          syncs++;
          held.push({ fd, done });
        },
        fdatasyncSync: (fd) => {
          flushedAtOnce++;
          fdatasyncSync(fd);
        },
      },
    });
  });
  afterEach(async () => {
    for (const h of held.splice(0)) h.done(null);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Lets the first held flush run for real (or fail, if told to). */
  const release = async () => {
    await until(() => held.length > 0);
    const { fd, done } = held.shift()!;
    if (failNext) {
      const error = failNext;
      failNext = null;
      return done(error);
    }
    await new Promise<void>((resolve) => fdatasync(fd, (error) => (done(error), resolve())));
  };

  it('answers an append only after the WAL is flushed, and shows it to the log\'s readers only then', async () => {
    let answered = false;
    const appended = store.append('count-a', [event(1)], 'no_stream').then((r) => ((answered = true), r));
    await until(() => held.length === 1);
    // Committed: the WAL file holds it, and a command deciding on the stream sees it.
    expect(statSync(join(dir, 'events.sqlite-wal')).size).toBeGreaterThan(0);
    expect((await store.readStream('count-a')).map((e) => e.data)).toEqual([{ n: 1 }]);
    // Not on disk yet: not answered, and invisible to projections and subscribers.
    expect(answered).toBe(false);
    expect(await store.readAll()).toEqual([]);
    expect(await store.headPosition()).toBeNull();
    const all = collect(store.subscribeToAll());
    const stream = collect(store.subscribeToStream('count-a'));
    await sleep(100);
    expect(all.events).toEqual([]);
    expect(stream.events).toEqual([]);
    // The flush goes to the WAL file the commit went to.
    expect(sameFile(held[0].fd, join(dir, 'events.sqlite-wal'))).toBe(true);

    await release();
    const result = await appended;
    expect(await store.headPosition()).toBe(result.position);
    expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }]);
    await until(() => all.events.length === 1 && stream.events.length === 1);
    await all.close();
    await stream.close();
  });

  it('commits the next group while a flush runs, and one flush then answers everything committed meanwhile', async () => {
    const first = store.append('count-b', [event(1)], 'no_stream');
    await until(() => held.length === 1);
    const second = store.append('count-c', [event(1)], 'no_stream');
    const third = store.append('count-d', [event(1)], 'no_stream');
    // Both committed while the first flush is still running, none flushed by it.
    await until(async () => (await store.readStream('count-d')).length === 1);
    expect(syncs).toBe(1);
    await release();
    await first;
    await release();
    await Promise.all([second, third]);
    expect(syncs).toBe(2);
    expect((await store.readAll()).map((e) => e.streamName)).toEqual(['count-b', 'count-c', 'count-d']);
  });

  it('says "may or may not be saved" when the flush fails, keeps it hidden, and shows it once a later flush succeeds', async () => {
    failNext = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    const appended = store.append('count-e', [event(1)], 'no_stream');
    await release();
    const error = await appended.then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(AppendOutcomeUnknownError);
    expect((error as AppendOutcomeUnknownError).reason).toBe('the event log could not be flushed to disk (EIO)');
    expect(await store.readAll()).toEqual([]);
    // Tried again by itself (about a second later), without any new write.
    await release();
    await until(async () => (await store.readAll()).length === 1);
  });

  it('puts another process\'s commits on disk before returning them, once', async () => {
    // Another process's store, answering at commit: its commits are in the WAL, perhaps not on disk.
    const other = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    try {
      const { position } = await other.append('count-g', [event(1)], 'no_stream');
      const before = flushedAtOnce;
      expect(await store.headPosition()).toBe(position);
      expect(flushedAtOnce).toBe(before + 1);
      expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }]);
      expect(await store.headPosition()).toBe(position);
      expect(flushedAtOnce).toBe(before + 1); // known to be on disk now: not flushed again
      await other.append('count-g', [event(2)], 0);
      expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(flushedAtOnce).toBe(before + 2);
    } finally {
      await other.close();
    }
  });

  it('puts another process\'s commits on disk before a stream subscription delivers them', async () => {
    const other = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    const stream = collect(store.subscribeToStream('count-h'));
    try {
      const before = flushedAtOnce;
      await other.append('count-h', [event(1)], 'no_stream');
      await until(() => stream.events.length === 1);
      expect(flushedAtOnce).toBe(before + 1);
    } finally {
      await stream.close();
      await other.close();
    }
  });

  it('puts what the WAL holds on disk when it opens (commits of a process killed before their flush)', async () => {
    const file = join(dir, 'killed.sqlite');
    // A connection that committed without syncing and stays open, so its WAL is not checkpointed away.
    const killed = new Database(file);
    killed.pragma('journal_mode = WAL');
    killed.pragma('synchronous = OFF');
    killed.exec('CREATE TABLE leftover (x)');
    killed.exec('INSERT INTO leftover VALUES (1)');
    let atOpen = 0;
    const reopened = new SqliteEventStore(file, { walFlush: { fdatasync, fdatasyncSync: (fd) => (atOpen++, fdatasyncSync(fd)) } });
    try {
      expect(atOpen).toBe(1);
    } finally {
      await reopened.close();
      killed.close();
    }
  });

  it('flushes and answers what it committed when closed', async () => {
    const appended = store.append('count-f', [event(1)], 'no_stream');
    await until(() => held.length === 1);
    const closed = store.close();
    await release();
    await closed;
    expect((await appended).position).toBeTruthy();
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    expect((await store.readAll()).map((e) => e.data)).toEqual([{ n: 1 }]);
  });
});

function collect(subscription: ReturnType<SqliteEventStore['subscribeToAll']>) {
  const events: RecordedEvent[] = [];
  const done = (async () => {
    for await (const e of subscription) events.push(e);
  })();
  return { events, close: async () => (await subscription.close(), await done) };
}

/** Whether a descriptor is open on that file (the same inode, read through /proc). */
const sameFile = (fd: number, path: string): boolean => statSync(`/proc/self/fd/${fd}`).ino === statSync(path).ino;

const until = (condition: () => boolean | Promise<boolean>) => eventually(condition, { timeoutMs: 15_000, everyMs: 5 });
