import { MessageChannel, MessagePort, Worker } from 'node:worker_threads';

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

/**
 * What a WAL file is cut back to each time it starts over (SQLite's `journal_size_limit`):
 * without it the file keeps the size of the largest burst it ever held (tens of MB after a
 * catch-up or a busy minute) for the life of the process, all of it disk that holds nothing.
 */
export const WAL_SIZE_LIMIT_BYTES = 1024 * 1024;

/** How often the thread checkpoints what each WAL holds. */
const INTERVAL_MS = 100;

/** How long an emptying of the WAL (`truncate`) tries again while another connection holds it. */
const TRUNCATE_PATIENCE_MS = 2_000;

/**
 * The thread's code, run with `eval` so that it is the same under ts-jest and in `dist/`. It
 * keeps one connection per open checkpointer (by its handle), checkpoints each in turn every
 * interval, and empties one on demand. A failed checkpoint (a full disk, a read-only volume) is
 * tried again about 5 s later for that file: its WAL grows meanwhile and nothing is lost; the
 * writer's own commits report the storage fault. Checkpointers of other threads of the process
 * (the projector thread) reach it through a port lent to them (`lend`), each port with its own
 * handles; returning the port closes their connections.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const sources = new Map();
const lentPorts = new Map();
const open = (file) => {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('journal_size_limit = ' + workerData.walSizeLimit);
  return db;
};
const checkpoint = (entry) => {
  if (entry.pausedTicks > 0) return void entry.pausedTicks--;
  try {
    entry.db ??= open(entry.file);
    entry.db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    try { entry.db?.close(); } catch {}
    entry.db = null;
    entry.pausedTicks = Math.ceil(5000 / workerData.intervalMs);
  }
};
setInterval(() => { for (const files of sources.values()) for (const entry of files.values()) checkpoint(entry); }, workerData.intervalMs);
const pause = new Int32Array(new SharedArrayBuffer(4));
const truncate = (entry) => {
  entry.db ??= open(entry.file);
  // busy: another connection's checkpoint or a reader held the WAL (SQLite answers a checkpoint
  // that meets another at once, without waiting). Both last moments: tried again for up to
  // TRUNCATE_PATIENCE_MS (blocking the thread delays only checkpoints).
  for (const deadline = Date.now() + workerData.truncatePatienceMs; ; ) {
    const [result] = entry.db.pragma('wal_checkpoint(TRUNCATE)');
    if (!result.busy) return;
    if (Date.now() >= deadline) throw new Error('the write-ahead log is in use by a reader: not truncated');
    Atomics.wait(pause, 0, 0, 5);
  }
};
const closeAll = (files) => {
  for (const entry of files.values()) try { entry.db?.close(); } catch {}
  files.clear();
};
const serve = (port) => {
  const files = new Map();
  sources.set(port, files);
  port.on('message', (message) => {
    const entry = files.get(message.handle);
    if (message.kind === 'open') {
      files.set(message.handle, { file: message.file, db: null, pausedTicks: 0 });
      return;
    }
    if (message.kind === 'lend') {
      lentPorts.set(message.lent, message.port);
      serve(message.port);
      return;
    }
    if (message.kind === 'return') {
      const lent = lentPorts.get(message.lent);
      lentPorts.delete(message.lent);
      if (lent) {
        closeAll(sources.get(lent) ?? new Map());
        sources.delete(lent);
        lent.close();
      }
      port.postMessage({ id: message.id });
      return;
    }
    if (message.kind === 'truncate') {
      try {
        if (!entry) throw new Error('the checkpointer is closed');
        truncate(entry);
        port.postMessage({ id: message.id });
      } catch (error) {
        port.postMessage({ id: message.id, error: String(error && error.message || error) });
      }
      return;
    }
    // close
    files.delete(message.handle);
    try { entry?.db?.close(); } catch {}
    port.postMessage({ id: message.id });
  });
  // A port's other end gone (its thread ended without returning it): its connections close.
  port.on('close', () => {
    if (port === parentPort || !sources.has(port)) return;
    closeAll(files);
    sources.delete(port);
  });
};
serve(parentPort);
`;

interface Waiting {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Where this isolate's checkpointers send their requests: the thread it started, or a port to another isolate's. */
type ToThread = Worker | MessagePort;

/** The port the projector thread was lent (`useLentCheckpointThread`): its checkpointers use it instead of a thread of their own. */
let lentPort: MessagePort | null = null;

/**
 * The process's one checkpoint thread, shared by every open WalCheckpointer: a thread (a V8
 * isolate of its own) costs about 9 MiB of resident memory, and the embedded server checkpoints
 * three files from each of its two isolates. Started by the first checkpointer of the isolate
 * that owns it (the request thread), stopped when the last one closes and every lent port is
 * returned; a thread that died is started again by the next one. In an isolate lent a port, the
 * checkpointers talk to the owner's thread through it, and never stop that thread.
 */
class CheckpointThread {
  private static current: CheckpointThread | null = null;

  static acquire(): CheckpointThread {
    if (CheckpointThread.current === null || CheckpointThread.current.gone) CheckpointThread.current = new CheckpointThread(lentPort);
    return CheckpointThread.current;
  }

  private readonly thread: ToThread;
  /** Only the isolate that started the thread stops it. */
  private readonly owned: Worker | null;
  private readonly exited: Promise<void>;
  private readonly waiting = new Map<number, Waiting>();
  private readonly handles = new Set<number>();
  private nextId = 0;
  gone = false;

  private constructor(lent: MessagePort | null) {
    this.owned = lent
      ? null
      : new Worker(THREAD_SOURCE, {
          eval: true,
          // The thread allocates a few small objects per checkpoint: a young generation of 1 MiB
          // serves it, where V8's default reserved and touched about 6 MiB more of the process.
          resourceLimits: { maxYoungGenerationSizeMb: 1 },
          workerData: { driver: require.resolve('better-sqlite3'), intervalMs: INTERVAL_MS, truncatePatienceMs: TRUNCATE_PATIENCE_MS, walSizeLimit: WAL_SIZE_LIMIT_BYTES },
        });
    this.thread = lent ?? this.owned!;
    this.thread.on('message', ({ id, error }: { id: number; error?: string }) => {
      const waiting = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.thread.unref();
      if (error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(error));
    });
    // Never what keeps the process (or the projector thread) alive; a thread that failed to start
    // leaves the safety net. After the listener: a port's 'message' listener refs it.
    this.thread.unref();
    this.exited = new Promise((resolve) => {
      const end = () => {
        this.gone = true;
        for (const waiting of this.waiting.values()) waiting.reject(new Error('the checkpoint thread stopped'));
        this.waiting.clear();
        resolve();
      };
      if (this.owned) {
        this.owned.once('exit', end);
        this.owned.once('error', end);
      } else {
        lent!.once('close', () => {
          // The owner's thread is gone: this isolate's next checkpointer starts a thread of its own.
          if (lentPort === lent) lentPort = null;
          end();
        });
      }
    });
  }

  open(file: string): number {
    const handle = this.nextId++;
    this.handles.add(handle);
    this.thread.postMessage({ kind: 'open', handle, file });
    return handle;
  }

  truncate(handle: number): Promise<void> {
    return this.ask({ kind: 'truncate', handle });
  }

  /**
   * A port through which another thread's checkpointers use this thread (`useLentCheckpointThread`
   * there). It counts as an open file until returned: `giveBack` closes what was opened through it.
   */
  lend(): { readonly port: MessagePort; giveBack(): Promise<void> } {
    const { port1, port2 } = new MessageChannel();
    const handle = this.nextId++;
    this.handles.add(handle);
    this.thread.postMessage({ kind: 'lend', lent: handle, port: port1 }, [port1]);
    return { port: port2, giveBack: () => this.close(handle, { kind: 'return', lent: handle }) };
  }

  /** Closes the handle's connection; the thread stops with its last handle (in the isolate that started it). */
  async close(handle: number, message: { kind: 'close'; handle: number } | { kind: 'return'; lent: number } = { kind: 'close', handle }): Promise<void> {
    if (!this.handles.delete(handle)) return;
    await this.ask(message).catch(() => undefined);
    if (this.handles.size > 0 || this.gone || !this.owned) return;
    if (CheckpointThread.current === this) CheckpointThread.current = null;
    const timeout = setTimeout(() => void this.owned!.terminate(), 5_000);
    void this.owned.terminate();
    await this.exited;
    clearTimeout(timeout);
  }

  private ask(message: { kind: 'truncate' | 'close'; handle: number } | { kind: 'return'; lent: number }): Promise<void> {
    if (this.gone) return Promise.reject(new Error('the checkpoint thread stopped'));
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      // An answer awaited keeps the process alive until it comes (a start that failed closes its
      // files with nothing else left to run: unref'd, the process would exit 0 before reporting it).
      if (this.waiting.size === 0) this.thread.ref();
      this.waiting.set(id, { resolve, reject });
      this.thread.postMessage({ ...message, id });
    });
  }
}

/**
 * Lends this isolate's checkpoint thread to another thread of the process (the embedded server's
 * projector thread), so that the process runs one. Pass the port to the thread (transferred),
 * which calls `useLentCheckpointThread` with it before it opens a database; `giveBack` once that
 * thread has exited.
 */
export function lendCheckpointThread(): { readonly port: MessagePort; giveBack(): Promise<void> } {
  return CheckpointThread.acquire().lend();
}

/** This thread's checkpointers use the thread that lent `port` (lendCheckpointThread) instead of starting their own. */
export function useLentCheckpointThread(port: MessagePort): void {
  lentPort = port;
}

/**
 * Checkpoints one SQLite WAL database from this isolate's checkpoint thread until closed, and
 * empties the WAL on demand (`truncate`). Each checkpointer has its own connection there.
 */
export class WalCheckpointer {
  private readonly thread: CheckpointThread;
  private readonly handle: number;

  constructor(file: string) {
    this.thread = CheckpointThread.acquire();
    this.handle = this.thread.open(file);
  }

  /**
   * Copies the whole WAL into the database file and truncates the WAL to nothing (SQLite's
   * TRUNCATE checkpoint), on the thread: the older page images the WAL still held (a deleted
   * document's, before secure_delete overwrote it) leave the disk's files. Writers wait for it
   * (their busy timeout); it rejects when a reader kept the WAL in use past the thread's busy
   * timeout, or the thread is gone.
   */
  truncate(): Promise<void> {
    return this.thread.truncate(this.handle);
  }

  /** Closes its connection on the thread (stopping the thread with the last one), so that the writer's close is the last one (it removes the WAL). */
  close(): Promise<void> {
    return this.thread.close(this.handle);
  }
}
