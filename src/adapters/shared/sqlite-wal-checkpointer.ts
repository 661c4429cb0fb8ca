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
parentPort.on('message', () => {
  clearInterval(timer);
  try { db?.close(); } catch {}
  parentPort.close();
});
`;

/** Checkpoints one SQLite WAL database from a worker thread until closed. */
export class WalCheckpointer {
  private readonly thread: Worker;
  private readonly exited: Promise<void>;

  constructor(file: string) {
    this.thread = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { file, driver: require.resolve('better-sqlite3'), intervalMs: INTERVAL_MS },
    });
    // Never what keeps the process alive; a thread that failed to start leaves the safety net.
    this.thread.unref();
    this.exited = new Promise((resolve) => {
      this.thread.once('exit', () => resolve());
      this.thread.once('error', () => resolve());
    });
  }

  /** Stops the thread and closes its connection, so that the writer's close is the last one (it removes the WAL). */
  async close(): Promise<void> {
    this.thread.postMessage('close');
    const timeout = setTimeout(() => void this.thread.terminate(), 5_000);
    await this.exited;
    clearTimeout(timeout);
  }
}
