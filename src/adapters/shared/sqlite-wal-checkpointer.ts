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
 * The checkpoint service's code: the body of a function of (`require`, `workerData`, `hosted`)
 * returning `serve(port, primary)`, kept as text so that it runs the same under ts-jest and in
 * `dist/`: with `eval` in a thread of its own (THREAD_SOURCE), or in a thread that has other work
 * (`hostCheckpoints`: the embedded server's projector thread), where its timer and ports never
 * keep that thread alive. It keeps one connection per open checkpointer (by its handle),
 * checkpoints each in turn every interval, and empties one on demand. A failed checkpoint (a full
 * disk, a read-only volume) is tried again about 5 s later for that file: its WAL grows meanwhile
 * and nothing is lost; the writer's own commits report the storage fault. Each port served has
 * its own handles; a port besides the primary one closes its connections when its other end goes
 * (the isolate that sent through it ended).
 */
const SERVICE_SOURCE = `
const Database = require(workerData.driver);
const sources = new Map();
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
const timer = setInterval(() => { for (const files of sources.values()) for (const entry of files.values()) checkpoint(entry); }, workerData.intervalMs);
if (hosted) timer.unref();
const pause = new Int32Array(new SharedArrayBuffer(4));
const truncate = (entry) => {
  entry.db ??= open(entry.file);
  // busy: another connection's checkpoint or a reader held the WAL (SQLite answers a checkpoint
  // that meets another at once, without waiting). Both last moments: tried again for up to
  // TRUNCATE_PATIENCE_MS (blocking the thread delays only checkpoints, and a hosting thread's work).
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
const serve = (port, primary) => {
  const files = new Map();
  sources.set(port, files);
  port.on('message', (message) => {
    const entry = files.get(message.handle);
    if (message.kind === 'open') {
      files.set(message.handle, { file: message.file, db: null, pausedTicks: 0 });
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
  if (hosted) port.unref();
  // The isolate that sent through this port learns that a host serves it: it waits for answers from now on.
  if (!primary) port.postMessage({ kind: 'hosting' });
  // A port's other end gone (its thread ended without returning it): its connections close.
  port.on('close', () => {
    if (primary || !sources.has(port)) return;
    closeAll(files);
    sources.delete(port);
  });
};
return serve;
`;

/** The checkpoint thread's code: the service on the thread's own port. */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(function (require, workerData, hosted) {${SERVICE_SOURCE}})(require, workerData, false)(parentPort, true);
`;

/** What the service is given: its driver and timings. */
const serviceData = () => ({ driver: require.resolve('better-sqlite3'), intervalMs: INTERVAL_MS, truncatePatienceMs: TRUNCATE_PATIENCE_MS, walSizeLimit: WAL_SIZE_LIMIT_BYTES });

interface Waiting {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** Where this isolate's checkpointers send their requests: the thread it started, or a port to a service another thread hosts. */
type ToService = Worker | MessagePort;

/**
 * The port to the checkpoint service another thread hosts for this isolate (`hostCheckpoints`
 * there, `checkpointsHostedElsewhere` here), while that thread lives: checkpointers use it
 * instead of a thread of their own.
 */
let hostPort: MessagePort | null = null;

/** This isolate's open checkpointers: moved to the next host when one is named. */
const openCheckpointers = new Set<WalCheckpointer>();

/**
 * The checkpoint service this isolate's checkpointers use. A thread of its own (a V8 isolate,
 * about 10 MiB of resident memory), started by the first checkpointer and stopped when the last
 * one closes; or, in the embedded server, a service its projector thread hosts, so that the
 * process runs no thread for checkpoints alone. A thread that died is started again by the next
 * checkpointer; a host that died leaves its checkpointers idle until the next host (the writer's
 * own checkpoint bounds the WAL meanwhile).
 */
class CheckpointService {
  private static current: CheckpointService | null = null;

  static acquire(): CheckpointService {
    if (CheckpointService.current === null || CheckpointService.current.gone) CheckpointService.current = new CheckpointService(hostPort);
    return CheckpointService.current;
  }

  /** The service a host serves on `port` from now on, for checkpointers open and to come. */
  static hostedOn(port: MessagePort): void {
    hostPort = port;
    CheckpointService.current = new CheckpointService(port);
  }

  private readonly service: ToService;
  /** The thread this isolate started, stopped with its last checkpointer; null for a hosted service. */
  private readonly owned: Worker | null;
  private readonly exited: Promise<void>;
  private readonly waiting = new Map<number, Waiting>();
  private readonly handles = new Set<number>();
  private nextId = 0;
  gone = false;
  /** A hosted service's host has started serving (a thread of its own serves from its start). */
  private hostServing: boolean;

  private constructor(hosted: MessagePort | null) {
    this.hostServing = hosted === null;
    this.owned = hosted
      ? null
      : new Worker(THREAD_SOURCE, {
          eval: true,
          // The thread allocates a few small objects per checkpoint: a young generation of 1 MiB
          // serves it, where V8's default reserved and touched about 6 MiB more of the process.
          resourceLimits: { maxYoungGenerationSizeMb: 1 },
          workerData: serviceData(),
        });
    this.service = hosted ?? this.owned!;
    this.service.on('message', ({ kind, id, error }: { kind?: 'hosting'; id: number; error?: string }) => {
      if (kind === 'hosting') return void (this.hostServing = true);
      const waiting = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.service.unref();
      if (error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(error));
    });
    // Never what keeps the process (or the projector thread) alive; a thread that failed to start
    // leaves the safety net. After the listener: a port's 'message' listener refs it.
    this.service.unref();
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
        hosted!.once('close', () => {
          // The host's thread is gone: checkpointers opened before the next host start a thread of their own.
          if (hostPort === hosted) hostPort = null;
          end();
        });
      }
    });
  }

  open(file: string): number {
    const handle = this.nextId++;
    this.handles.add(handle);
    this.service.postMessage({ kind: 'open', handle, file });
    return handle;
  }

  truncate(handle: number): Promise<void> {
    return this.ask({ kind: 'truncate', handle });
  }

  /** Closes the handle's connection; a thread this isolate started stops with its last handle. */
  async close(handle: number): Promise<void> {
    if (!this.handles.delete(handle)) return;
    // No host yet (a start that failed before its projector thread ran): its host, should one
    // come, opens and closes it in turn; waiting for an answer would keep the process for ever.
    if (!this.hostServing) return void this.service.postMessage({ kind: 'close', handle, id: this.nextId++ });
    await this.ask({ kind: 'close', handle }).catch(() => undefined);
    if (this.handles.size > 0 || this.gone || !this.owned) return;
    if (CheckpointService.current === this) CheckpointService.current = null;
    const timeout = setTimeout(() => void this.owned!.terminate(), 5_000);
    void this.owned.terminate();
    await this.exited;
    clearTimeout(timeout);
  }

  private ask(message: { kind: 'truncate' | 'close'; handle: number }): Promise<void> {
    if (this.gone) return Promise.reject(new Error('the checkpoint thread stopped'));
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      // An answer awaited keeps the process alive until it comes (a start that failed closes its
      // files with nothing else left to run: unref'd, the process would exit 0 before reporting it).
      if (this.waiting.size === 0) this.service.ref();
      this.waiting.set(id, { resolve, reject });
      this.service.postMessage({ ...message, id });
    });
  }
}

/**
 * This isolate's checkpoints are served from now on by a thread about to start (the embedded
 * server's projector thread), which calls `hostCheckpoints` with the port returned (transfer it):
 * every open checkpointer moves there, and so does every one opened later. What they send before
 * the host starts waits in the port. Called again for each start of such a thread.
 */
export function checkpointsHostedElsewhere(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  CheckpointService.hostedOn(port2);
  for (const checkpointer of openCheckpointers) checkpointer.moveToCurrentService();
  return port1;
}

/**
 * Runs the checkpoint service on this thread, for this thread's checkpointers and for the
 * isolate that sent `port` (`checkpointsHostedElsewhere`), instead of a thread for it alone:
 * its checkpoints (short, and copies that never block a writer) then share this thread's time.
 */
export function hostCheckpoints(port: MessagePort): void {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const serve = new Function('require', 'workerData', 'hosted', SERVICE_SOURCE)(require, serviceData(), true) as (port: MessagePort, primary: boolean) => void;
  const { port1, port2 } = new MessageChannel();
  serve(port1, true);
  serve(port, false);
  CheckpointService.hostedOn(port2);
}

/**
 * Checkpoints one SQLite WAL database from this isolate's checkpoint service until closed, and
 * empties the WAL on demand (`truncate`). Each checkpointer has its own connection there.
 */
export class WalCheckpointer {
  private service: CheckpointService;
  private handle: number;

  constructor(private readonly file: string) {
    this.service = CheckpointService.acquire();
    this.handle = this.service.open(file);
    openCheckpointers.add(this);
  }

  /** Moves to the service checkpointers now use (a new host), closing its connection on the one it used. */
  moveToCurrentService(): void {
    const current = CheckpointService.acquire();
    if (current === this.service) return;
    void this.service.close(this.handle);
    this.service = current;
    this.handle = current.open(this.file);
  }

  /**
   * Copies the whole WAL into the database file and truncates the WAL to nothing (SQLite's
   * TRUNCATE checkpoint), on the service: the older page images the WAL still held (a deleted
   * document's, before secure_delete overwrote it) leave the disk's files. Writers wait for it
   * (their busy timeout); it rejects when a reader kept the WAL in use past the service's busy
   * timeout, or a thread of its own that it started stopped. A hosted service gone (its thread exited) hands the checkpointer to a thread of its own first.
   */
  async truncate(): Promise<void> {
    // A host that exited (the projector thread, until its next start) leaves a thread of its
    // own to do it: a delete's TRUNCATE checkpoint does not wait for the next host.
    if (this.service.gone) this.moveToCurrentService();
    try {
      await this.service.truncate(this.handle);
    } catch (error) {
      if (!this.service.gone) throw error;
      this.moveToCurrentService();
      await this.service.truncate(this.handle);
    }
  }

  /** Closes its connection on the service (a thread of its own stops with the last one), so that the writer's close is the last one (it removes the WAL). */
  close(): Promise<void> {
    openCheckpointers.delete(this);
    return this.service.close(this.handle);
  }
}
