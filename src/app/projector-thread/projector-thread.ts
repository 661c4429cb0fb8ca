import { MessagePort, Worker } from 'node:worker_threads';
import type { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { checkpointsHostedElsewhere } from '../../adapters/shared/sqlite-wal-checkpointer';
import type { Logger } from '../../infrastructure/logger';
import type { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { LogPosition } from '../../shared/domain/event';
import { recordProjectorBatch } from '../../shared/observability/metrics';
import { Backoff } from '../../shared/application/operations/backoff';
import type { ProjectionStatus } from '../../shared/application/projection-runtime/projector-runner';
import type { Projectors } from '../../shared/application/projection-runtime/process-projectors';
import { messageOf } from '../../shared/domain/errors';
import type { OfflineNow } from '../../modules/webhooks/deliver-webhooks/chatkit-webhook-lookups';
import type { WebhookDeactivation } from '../../modules/webhooks/deliver-webhooks/webhook-delivery-worker';
import type { FromProjectorThread, ProjectorThreadData, ToProjectorThread } from './protocol';
import { SharedHead } from './shared-head';
import { SealedTexts } from './sealed-texts';
import { workerScript } from '../worker-script';
import { ALL_PROJECTIONS } from '../../../projections';
import { checkpointName } from '../../../projections/projection';

/** What the projector thread's webhook deliveries ask of the request thread, and where attachment links point. */
export interface ThreadWebhookHost {
  readonly origin: string;
  readonly offlineNow: OfflineNow;
  readonly deactivate: WebhookDeactivation;
}

/** How long a stop waits for the thread to write its checkpoints before it is terminated. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * The request thread's view of the projector thread (worker-entry.ts): the surface
 * ProjectionWatch, health, readiness and metrics use, answered from the thread's reports. It
 * tells the thread each new durable head of the log (which also wakes its subscriptions), the
 * plaintexts the request thread seals (SealedTexts) and each destroy of data keys; restarts a
 * thread that throws or exits, with backoff (the projections show as `dropped` meanwhile, and
 * waits fall back to the stored checkpoints); stops it after it has written its checkpoints.
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
  /** The plaintexts the request thread seals, posted on to the thread. */
  private readonly sealedTexts = new SealedTexts((message) => this.send(message));
  private readonly offSealedTexts: () => void;
  /** Set once the server listens: the thread delivers webhooks (and a restarted one again). */
  private webhooks: ThreadWebhookHost | null = null;
  private webhooksStopped: (() => void) | null = null;
  /** Whether the thread now running delivers the webhooks (tests check the delivering happens there). */
  deliversWebhooks = false;
  /** The thread's id once it reported (tests check the folding happens there). */
  threadId: number | null = null;
  /** The checkpoints of the projections the thread folds in the background (`ProjectionDefinition.background`). */
  private readonly backgroundCheckpoints: ReadonlySet<string>;

  /** The port the first thread hosts this isolate's WAL checkpoints on (`checkpointsHostedElsewhere` before the stores opened), until it starts. */
  private firstCheckpointPort: MessagePort | null;

  constructor(
    private readonly data: Omit<ProjectorThreadData, 'head'>,
    events: SqliteEventStore,
    keys: DataKeyRing,
    private readonly logger: Logger,
  ) {
    this.firstCheckpointPort = data.checkpoints ?? null;
    this.backgroundCheckpoints = new Set(
      data.projections.flatMap(({ name, version }) => ALL_PROJECTIONS.filter((d) => d.name === name && d.background).slice(0, 1).map((d) => checkpointName({ ...d, version }))),
    );
    this.offHead = events.watchVisibleHead((head) => this.head.moveTo(head));
    this.offSealedTexts = keys.watchSealed(this.sealedTexts.add);
    this.offDestroys = keys.watchDestroys((selector) => {
      // The texts sealed before the destroy go first: none of a destroyed key arrives after its word.
      this.sealedTexts.flush();
      this.send({ kind: 'keys-destroyed', selector });
    });
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

  /**
   * Has the thread deliver Chatkit webhooks (the embedded server's, once it listens), and every
   * thread started after it; its questions (who is offline, a deactivation) are answered here.
   */
  deliverWebhooks(host: ThreadWebhookHost): void {
    this.webhooks = host;
    this.send({ kind: 'deliver-webhooks', origin: host.origin });
  }

  /** Stops the thread's deliveries (the server drains); resolves once their checkpoints are written, or the thread is gone. */
  stopWebhooks(): Promise<void> {
    this.webhooks = null;
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    return new Promise<void>((resolveStop) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('exit', done);
        this.webhooksStopped = null;
        resolveStop();
      };
      // Past it, the thread's own stop stops them (before its stores close).
      const timer = setTimeout(done, STOP_TIMEOUT_MS);
      this.webhooksStopped = done;
      worker.once('exit', done);
      this.send({ kind: 'stop-webhooks' });
    });
  }

  /** Only waits on the projections folded in the background cross to the thread: a send's waits post nothing. */
  hurry(checkpoints: readonly string[]): void {
    const background = checkpoints.filter((checkpoint) => this.backgroundCheckpoints.has(checkpoint));
    if (background.length) this.send({ kind: 'hurry', checkpoints: background });
  }

  /** Lets a test make the thread fail as a bug would (only with `testHooks`). */
  crashForTest(): void {
    this.send({ kind: 'crash' });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.offHead();
    this.offDestroys();
    this.offSealedTexts();
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
    // The thread hosts this isolate's WAL checkpoints too: the first on the port named before the
    // stores opened (openRuntime), each next one on a new port they move to.
    const checkpoints = this.firstCheckpointPort ?? checkpointsHostedElsewhere();
    this.firstCheckpointPort = null;
    const worker = new Worker(workerScript(__dirname, 'worker-entry.js', __filename), {
      workerData: { ...this.data, head: this.head.buffer, checkpoints } satisfies ProjectorThreadData,
      transferList: [checkpoints],
    });
    this.worker = worker;
    if (this.webhooks) worker.postMessage({ kind: 'deliver-webhooks', origin: this.webhooks.origin } satisfies ToProjectorThread);
    worker.on('message', (message: FromProjectorThread) => this.received(worker, message));
    worker.on('error', (error) => this.logger.error({ err: error }, 'the projector thread failed'));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.deliversWebhooks = false;
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

  private received(worker: Worker, message: FromProjectorThread): void {
    switch (message.kind) {
      case 'ask-offline-now':
        this.answerOffline(worker, message);
        return;
      case 'deactivate-webhook':
        this.deactivate(worker, message);
        return;
      case 'webhooks-started':
        this.deliversWebhooks = true;
        return;
      case 'webhooks-stopped':
        this.deliversWebhooks = false;
        this.webhooksStopped?.();
        return;
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

  private answerOffline(worker: Worker, question: Extract<FromProjectorThread, { kind: 'ask-offline-now' }>): void {
    const answer = (offline: readonly string[], error?: string) =>
      worker.postMessage({ kind: 'offline-now', id: question.id, offline, ...(error !== undefined && { error }) } satisfies ToProjectorThread);
    if (!this.webhooks) return answer([], 'the request thread does not deliver webhooks');
    this.webhooks.offlineNow(question.instanceId, question.userIds).then(
      (offline) => answer(offline),
      (error: unknown) => answer([], messageOf(error)),
    );
  }

  private deactivate(worker: Worker, request: Extract<FromProjectorThread, { kind: 'deactivate-webhook' }>): void {
    const answer = (error?: string) => worker.postMessage({ kind: 'webhook-deactivated', id: request.id, ...(error !== undefined && { error }) } satisfies ToProjectorThread);
    if (!this.webhooks) return answer('the request thread does not deliver webhooks');
    this.webhooks.deactivate(request.instanceId, request.webhookId, request.failure).then(
      () => answer(),
      (error: unknown) => answer(messageOf(error)),
    );
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
