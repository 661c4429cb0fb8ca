import { Worker } from 'node:worker_threads';

/**
 * Without this, SQLite checkpoints a WAL database inside whichever commit pushes the WAL past
 * `wal_autocheckpoint` pages: that commit copies the WAL into the database file and fsyncs it,
 * on the event loop, and every request waits (measured 60–400 ms for 3,000 pages of the event
 * log under disk contention; the p99 of sends to one busy room fell from about 350 ms to about
 * 100 ms without it). A thread with its own connection copies the WAL in PASSIVE checkpoints,
 * which never block the writer.
 *
 * A checkpoint from another connection cannot make the WAL start over while commits keep
 * coming, so the writer keeps its own automatic checkpoint, at this many pages: it then finds
 * all but the last moment's pages already copied, and restarts the WAL. It is also the bound
 * should the thread fall behind or fail.
 */
export const WRITER_CHECKPOINT_PAGES = 4_096;

/** How often the thread checkpoints what the WAL holds. */
const INTERVAL_MS = 100;

/** How long an emptying of the WAL (`truncate`) tries again while another connection holds it. */
const TRUNCATE_PATIENCE_MS = 2_000;

/**
 * The thread's code, run with `eval` so that it is the same under ts-jest and in `dist/`.
 * A failed checkpoint (a full disk, a read-only volume) is tried again about 5 s later: the
 * WAL grows meanwhile and nothing is lost; the writer's own commits report the storage fault.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db = null;
let pausedTicks = 0;
const checkpoint = () => {
  if (pausedTicks > 0) return void pausedTicks--;
  try {
    db ??= new Database(workerData.file, { fileMustExist: true });
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    try { db?.close(); } catch {}
    db = null;
    pausedTicks = Math.ceil(5000 / workerData.intervalMs);
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
const pause = new Int32Array(new SharedArrayBuffer(4));
const truncate = () => {
  db ??= new Database(workerData.file, { fileMustExist: true });
  // busy: another connection's checkpoint or a reader held the WAL (SQLite answers a checkpoint
  // that meets another at once, without waiting). Both last moments: tried again for up to
  // TRUNCATE_PATIENCE_MS (the thread is this database's alone; blocking it delays only checkpoints).
  for (const deadline = Date.now() + workerData.truncatePatienceMs; ; ) {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)');
    if (!result.busy) return;
    if (Date.now() >= deadline) throw new Error('the write-ahead log is in use by a reader: not truncated');
    Atomics.wait(pause, 0, 0, 5);
  }
};
parentPort.on('message', (message) => {
  if (message.kind === 'truncate') {
    try {
      truncate();
      parentPort.postMessage({ id: message.id });
    } catch (error) {
      parentPort.postMessage({ id: message.id, error: String(error && error.message || error) });
    }
    return;
  }
  clearInterval(timer);
  try { db?.close(); } catch {}
  parentPort.close();
});
`;

/**
 * Checkpoints one SQLite WAL database from a worker thread until closed, and empties the WAL
 * on demand (`truncate`).
 */
export class WalCheckpointer {
  private readonly thread: Worker;
  private readonly exited: Promise<void>;
  private readonly truncations = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextTruncation = 0;
  private gone = false;

  constructor(file: string) {
    this.thread = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { file, driver: require.resolve('better-sqlite3'), intervalMs: INTERVAL_MS, truncatePatienceMs: TRUNCATE_PATIENCE_MS },
    });
    // Never what keeps the process alive; a thread that failed to start leaves the safety net.
    this.thread.unref();
    this.thread.on('message', ({ id, error }: { id: number; error?: string }) => {
      const waiting = this.truncations.get(id);
      this.truncations.delete(id);
      if (error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(error));
    });
    this.exited = new Promise((resolve) => {
      const end = () => {
        this.gone = true;
        for (const waiting of this.truncations.values()) waiting.reject(new Error('the checkpoint thread stopped'));
        this.truncations.clear();
        resolve();
      };
      this.thread.once('exit', end);
      this.thread.once('error', end);
    });
  }

  /**
   * Copies the whole WAL into the database file and truncates the WAL to nothing (SQLite's
   * TRUNCATE checkpoint), on the thread: the older page images the WAL still held (a deleted
   * document's, before secure_delete overwrote it) leave the disk's files. Writers wait for it
   * (their busy timeout); it rejects when a reader kept the WAL in use past the thread's busy
   * timeout, or the thread is gone.
   */
  truncate(): Promise<void> {
    if (this.gone) return Promise.reject(new Error('the checkpoint thread stopped'));
    const id = this.nextTruncation++;
    return new Promise<void>((resolve, reject) => {
      this.truncations.set(id, { resolve, reject });
      this.thread.postMessage({ kind: 'truncate', id });
    });
  }

  /** Stops the thread and closes its connection, so that the writer's close is the last one (it removes the WAL). */
  async close(): Promise<void> {
    this.thread.postMessage({ kind: 'close' });
    const timeout = setTimeout(() => void this.thread.terminate(), 5_000);
    await this.exited;
    clearTimeout(timeout);
  }
}
