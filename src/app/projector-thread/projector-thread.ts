import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import type { Logger } from '../../infrastructure/logger';
import type { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { LogPosition } from '../../shared/domain/event';
import { recordProjectorBatch } from '../../shared/observability/metrics';
import { Backoff } from '../../shared/application/operations/backoff';
import type { ProjectionStatus } from '../../shared/application/projection-runtime/projector-runner';
import type { Projectors } from '../../shared/application/projection-runtime/process-projectors';
import type { FromProjectorThread, ProjectorThreadData, ToProjectorThread } from './protocol';
import { SharedHead } from './shared-head';

/** How long a stop waits for the thread to write its checkpoints before it is terminated. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * The compiled thread. Under ts-jest this file is TypeScript and the thread runs the build in
 * `dist/` (tests that start servers build first).
 */
function workerScript(): string {
  const beside = join(__dirname, 'worker-entry.js');
  if (__filename.endsWith('.js')) return beside;
  const built = resolve(__dirname, '..', '..', '..', 'dist', 'src', 'app', 'projector-thread', 'worker-entry.js');
  if (!existsSync(built)) throw new Error(`the projector thread runs ${built}: build first (npm run build)`);
  return built;
}

/**
 * The request thread's view of the projector thread (worker-entry.ts): the surface
 * ProjectionWatch, health, readiness and metrics use, answered from the thread's reports. It
 * tells the thread each new durable head of the log (which also wakes its subscriptions) and
 * each destroy of data keys; restarts a thread that throws or exits, with backoff (the
 * projections show as `dropped` meanwhile, and waits fall back to the stored checkpoints);
 * stops it after it has written its checkpoints.
 */
export class ProjectorThread implements Projectors {
  private worker: Worker | null = null;
  private status_: readonly ProjectionStatus[] = [];
  private positions: readonly (LogPosition | null)[] = [];
  private indexOf = new Map<string, number>();
  private held = new Set<string>();
  private parked = new Map<string, LogPosition>();
  private readonly listeners = new Set<() => void>();
  private readonly backoff = new Backoff(100, 5_000);
  /** Where the request thread tells the projector thread the head on disk. */
  private readonly head = new SharedHead();
  private stopping = false;
  private down: string | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private startedOnce: (() => void) | null = null;
  private stopped: (() => void) | null = null;
  private readonly offHead: () => void;
  private readonly offDestroys: () => void;
  /** The thread's id once it reported (tests check the folding happens there). */
  threadId: number | null = null;

  constructor(
    private readonly data: Omit<ProjectorThreadData, 'head'>,
    events: SqliteEventStore,
    keys: DataKeyRing,
    private readonly logger: Logger,
  ) {
    this.offHead = events.watchVisibleHead((head) => this.head.moveTo(head));
    this.offDestroys = keys.watchDestroys((selector) => this.send({ kind: 'keys-destroyed', selector }));
  }

  get running(): string[] {
    return [...this.held];
  }

  /** Starts the thread; resolves once the serving versions have folded what was in the log (as ProcessProjectors.start). */
  start(): Promise<void> {
    return new Promise<void>((resolveStart) => {
      this.startedOnce = resolveStart;
      this.spawn();
    });
  }

  holds(checkpoint: string): boolean {
    return this.held.has(checkpoint);
  }

  positionOf(checkpoint: string): LogPosition | null {
    const index = this.indexOf.get(checkpoint);
    return index === undefined ? null : (this.positions[index] ?? null);
  }

  parkedAt(checkpoint: string): LogPosition | null {
    return this.parked.get(checkpoint) ?? null;
  }

  status(): ProjectionStatus[] {
    return this.status_.map((status, i) => {
      const position = this.positions[i] ?? status.position;
      return this.down ? { name: status.name, state: 'dropped', position, error: this.down } : { ...status, position };
    });
  }

  onProgress(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Lets a test make the thread fail as a bug would (only with `testHooks`). */
  crashForTest(): void {
    this.send({ kind: 'crash' });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.offHead();
    this.offDestroys();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolveStop) => {
      const timer = setTimeout(() => {
        this.logger.error('the projector thread did not stop in time: terminated (it refolds from its checkpoints at the next start)');
        void worker.terminate();
      }, STOP_TIMEOUT_MS);
      this.stopped = () => {
        clearTimeout(timer);
        resolveStop();
      };
      worker.once('exit', () => this.stopped?.());
      this.send({ kind: 'stop' });
    });
    await worker.terminate();
  }

  private send(message: ToProjectorThread): void {
    this.worker?.postMessage(message);
  }

  private spawn(): void {
    const worker = new Worker(workerScript(), { workerData: { ...this.data, head: this.head.buffer } satisfies ProjectorThreadData });
    this.worker = worker;
    worker.on('message', (message: FromProjectorThread) => this.received(message));
    worker.on('error', (error) => this.logger.error({ err: error }, 'the projector thread failed'));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (this.stopping) return this.stopped?.();
      this.down = `the projector thread exited (code ${code}); restarting`;
      this.held.clear();
      this.parked.clear();
      this.notify();
      const wait = this.backoff.next();
      this.logger.error({ code, restartInMs: wait }, 'the projector thread exited; it restarts from its checkpoints');
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (!this.stopping) this.spawn();
      }, wait);
    });
  }

  private received(message: FromProjectorThread): void {
    switch (message.kind) {
      case 'state':
        this.down = null;
        this.threadId = message.threadId;
        this.status_ = message.status;
        this.positions = message.status.map((s) => s.position);
        this.indexOf = new Map(message.status.map((s, i) => [s.name, i]));
        this.held = new Set(message.running);
        this.parked = new Map(message.status.filter((s) => s.state === 'parked').map((s) => [s.name, s.failedEvent!.position]));
        break;
      case 'positions':
        this.positions = message.positions;
        for (const [events, seconds] of message.batches) recordProjectorBatch(events, seconds);
        break;
      case 'started':
        this.backoff.reset();
        this.startedOnce?.();
        this.startedOnce = null;
        return;
      case 'stopped':
        this.stopped?.();
        return;
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
