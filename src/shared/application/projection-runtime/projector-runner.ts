import { randomUUID } from 'node:crypto';
import { LogPosition, RecordedEvent } from '../../domain/event';
import { messageOf } from '../../domain/errors';
import { EventStore } from '../../ports/event-store.port';
import { LeaseLostError, ReadModelStore } from '../../ports/read-model-store.port';
import { checkpointName, physicalCollectionSpecs, ProjectionDefinition } from '../../../../projections/projection';
import { Backoff } from '../operations/backoff';
import { BatchFolder } from './projector/batch-folder';
import { FollowHandlers, LogFollower } from './projector/log-follower';
import { PROJECTOR_STATUS, ProjectionParking } from './projector/parking';
import { FirstCatchUp, ProgressSignal } from './projector/progress';
import { ProjectionLeases } from './projector/projection-leases';
import { everyLayoutCheckpoint, layoutResumePosition, ProjectionPart, projectionParts } from './projector/projection-parts';
import { HeldProjections } from './projector/held-projections';
import { assertOneWriterPerCollection } from './projector/projection-slot';
import { LiveEventsSharing, liveSubscriber } from './projector/shared-live-events';
import { ProjectionStatus, projectionStatus, ProjectorRunnerStats, RunCounts } from './projector/status';

export { PROJECTOR_STATUS } from './projector/parking';
export { ProjectionEventError } from './projector/projection-event-error';
export type { ProjectionRunStats } from './projector/projection-slot';
export type { ProjectionStatus, ProjectorRunnerStats } from './projector/status';

export interface ProjectorRunnerOptions {
  /** Who holds the leases, for operators reading the lease table. */
  readonly owner?: string;
  readonly maxBatch?: number;
  /** Live, how long a batch gathers events after its first before it is written (default 0: those already buffered). */
  readonly liveGatherMs?: number;
  /** Events read and written per transaction while catching up (default: 10,000 until first caught up, then 2,000). */
  readonly catchUpPage?: number;
  readonly leaseTtlMs?: number;
  /**
   * How many partitions each projection that declares a partitioning is split into
   * (PROJECTOR_PARTITIONS, default 1): each has its own lease and checkpoint, so several
   * workers fold one projection. Every process folding the same read models must use the same.
   */
  readonly partitions?: number;
  /** false: takes every lease it can rather than its share among the seated workers (ProjectionLeases); the rebuild CLI. */
  readonly shareOut?: boolean;
  /** First and longest wait before resubscribing after a drop. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * How many times the same event may fail a projection's `evolve` before that projection is
   * parked. Between attempts the projection waits alone (backoff as after a drop); the others fold on.
   */
  readonly maxEventAttempts?: number;
  /** Every drop (the runner resubscribes by itself) and every parked projection. */
  /** …and every failed overwrite of freed space after a destroying batch (`freedSpace`), which drops nothing. */
  readonly onError?: (error: unknown, context: { readonly projection?: string; readonly parked?: boolean; readonly freedSpace?: true }) => void;
  readonly onProgress?: (position: LogPosition, eventsApplied: number) => void;
  /** The set of projections this runner holds changed (taken over, lost): operators read it in the log. */
  readonly onLeasesChanged?: (held: readonly string[]) => void;
  /** Each batch folded, for metrics (the process's, given by the app; a projector thread sends them to the request thread's). */
  readonly recordBatch?: (events: number, seconds: number) => void;
  /**
   * Live, the log's events shared with another runner of the process (SharedLiveEvents): this
   * one reads them and hands them on, or takes them from the one that does (default: a
   * subscription of its own).
   */
  readonly liveEvents?: LiveEventsSharing;
}

/**
 * Folds the log into read models for the projections this process holds the leases of. One
 * catch-up-then-live subscription feeds the whole group; each batch of document changes is
 * written together with every projection's checkpoint and fenced by the leases, so a crash
 * never leaves a half-applied batch, a redelivered event is skipped by the position each
 * document records, and a worker whose lease lapsed cannot write. A batch larger than the
 * store's bound (`batchLimit`) is written in several; checkpoints move only with what is written.
 *
 * It never stops by itself while it runs (Eventuous's model): any error of the store or the
 * subscription drops it; it stops renewing its leases, reports, waits with backoff and
 * resubscribes from the stored checkpoints. An event that fails one projection's `evolve`
 * stops that projection alone, just before the event, while the others fold the rest of the
 * batch and go on; it tries the event again after a backoff, and is parked when the event
 * keeps failing it.
 *
 * This class is the supervisor (claim, follow, drop, back off, resubscribe); each mechanism is
 * a file of `projector/`: the leases (`projection-leases.ts`), what it holds and where each
 * stands (`held-projections.ts`), the log read by pages then live (`log-follower.ts`), the
 * fold and write of a batch (`batch-folder.ts`, with `bounded-writer.ts` and
 * `written-ids.ts`), failing projections (`parking.ts`), and what it reports (`status.ts`,
 * `progress.ts`).
 */
export class ProjectorRunner {
  private readonly leaseTtlMs: number;
  private readonly maxEventAttempts: number;
  private readonly backoff: Backoff;
  private readonly leases: ProjectionLeases;
  private readonly parking: ProjectionParking;
  private readonly follower: LogFollower;
  private readonly followHandlers: FollowHandlers;
  /** Whether a held projection folds now (not parked, not waiting for a retry). */
  private readonly folds = (checkpoint: string): boolean => this.parking.folds(checkpoint);
  private readonly progress = new ProgressSignal();
  private readonly firstCatchUp = new FirstCatchUp();
  private readonly counts = new RunCounts();
  private readonly held = new HeldProjections();
  /** Folds for the projections held (one per claim). */
  private folder: BatchFolder | null = null;
  private supervisor: Promise<void> | null = null;
  private wakeSupervisor: (() => void) | null = null;
  private firstAttemptDone: () => void = () => undefined;
  private leaseSetChanged = false;
  /** Set when retrying projections are due: the fold restarts from the least advanced one, without a drop. */
  private refollow = false;
  private stopped = false;
  /** Why the runner dropped, while it waits to resubscribe. */
  private dropped: string | null = null;
  /** Every part of every projection (one per projection not split): what leases are taken for. */
  private readonly parts: readonly ProjectionPart[];
  /** The parts of each split projection, by its checkpoint name. */
  private readonly partsOf = new Map<string, readonly string[]>();
  /** Event types after which some projection's documents no longer hold what they held (`destroys`). */
  private readonly destroying: ReadonlySet<string>;
  /**
   * While the freed space of a destroying batch is overwritten, where the held projections stood
   * before it: read-your-writes sees the batch as folded only once its content left the files.
   */
  private shownBefore: ReadonlyMap<string, LogPosition | null> | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly definitions: readonly ProjectionDefinition[],
    private readonly options: ProjectorRunnerOptions = {},
  ) {
    const owner = options.owner ?? `projector-${process.pid}-${randomUUID().slice(0, 8)}`;
    /** Events read per page while catching up. */
    const catchUpPage = options.catchUpPage ?? 2_000;
    // The same before the process has first caught up (a start on a long log, a rebuild): the
    // process is not ready yet, and larger transactions write each touched index page to the
    // WAL fewer times (measured: a third less wall time per event on SQLite).
    const firstCatchUpPage = options.catchUpPage ?? 10_000;
    this.leaseTtlMs = options.leaseTtlMs ?? 15_000;
    this.maxEventAttempts = options.maxEventAttempts ?? 3;
    const backoff = options.backoff ?? { initialMs: 100, maxMs: 5_000 };
    this.backoff = new Backoff(backoff.initialMs, backoff.maxMs);
    assertOneWriterPerCollection(definitions);
    this.parts = projectionParts(definitions, options.partitions ?? 1);
    for (const part of this.parts) {
      if (part.count > 1) this.partsOf.set(part.projection, [...(this.partsOf.get(part.projection) ?? []), part.checkpoint]);
    }
    this.destroying = new Set(definitions.flatMap((definition) => definition.destroys ?? []));
    this.parking = new ProjectionParking(readModels, {
      owner,
      maxEventAttempts: this.maxEventAttempts,
      backoff,
      onError: options.onError,
      onParked: () => {
        // Writes waiting for it learn now that it will not get there.
        this.progress.notify();
        this.markCaughtUpIfDone();
      },
      onRetryDue: () => {
        this.refollow = true;
        void this.follower.close();
      },
    });
    this.leases = new ProjectionLeases(readModels, this.parts, {
      owner,
      ttlMs: this.leaseTtlMs,
      shareOut: options.shareOut,
      isParked: (checkpoint) => this.parking.isParked(checkpoint),
      folding: () => this.running,
      onChanged: async () => {
        if (this.stopped) return;
        this.leaseSetChanged = true;
        this.wakeSupervisor?.();
        await this.follower.close();
      },
      onFailed: (error) => this.follower.fail(error),
    });
    // A destroying event ends the gathering: the content it removes leaves the files promptly, and its delete, which waits for that, soon answers.
    this.follower = new LogFollower(
      events,
      options.maxBatch ?? 500,
      options.liveGatherMs ?? 0,
      (event) => this.destroying.has(event.type),
      liveSubscriber(events, options.liveEvents, catchUpPage),
    );
    this.followHandlers = {
      pageSize: () => (this.firstCatchUp.reached ? catchUpPage : firstCatchUpPage),
      interrupted: () => this.leaseSetChanged || this.stopped || this.refollow,
      apply: (batch) => this.applyBatch(batch),
      afterPage: async () => {
        if (!this.firstCatchUp.reached && this.firstCatchUp.headReachedBy(this.activePositions())) await this.buildDeferredIndexes();
        this.markCaughtUpIfDone();
      },
      caughtUp: async () => {
        await this.buildDeferredIndexes();
        this.markCaughtUpIfDone();
      },
      afterLive: () => this.markCaughtUpIfDone(),
    };
  }

  /** Names of the projections (and partitions: `ProjectionPart.checkpoint`) this runner holds and folds. */
  get running(): string[] {
    return this.held.names;
  }

  /**
   * Whether this runner holds and folds a projection, or a partition of one; a split
   * projection is held when every partition is (no allocation: read-your-writes asks per write).
   */
  holds(checkpoint: string): boolean {
    const parts = this.partsOf.get(checkpoint);
    if (!parts) return this.held.holds(checkpoint);
    for (const part of parts) if (!this.held.holds(part)) return false;
    return true;
  }

  /**
   * Every projection of the group as this runner sees it; a split projection as one when
   * this runner holds every partition, otherwise each partition it holds.
   */
  status(): ProjectionStatus[] {
    return this.definitions.flatMap((definition) => {
      const name = checkpointName(definition);
      const parts = this.partsOf.get(name);
      if (parts && !this.holds(name)) return parts.filter((part) => this.held.holds(part)).map((part) => this.statusOf(part, [part]));
      return [this.statusOf(name, parts ?? [name])];
    });
  }

  private statusOf(name: string, parts: readonly string[]): ProjectionStatus {
    const first = <T>(of: (part: string) => T | undefined): T | undefined => parts.map(of).find((found) => found !== undefined);
    return projectionStatus({
      name,
      position: this.positionOf(name),
      held: this.holds(name),
      dropped: this.dropped,
      parked: first((part) => this.parking.parkedOne(part)),
      retrying: first((part) => this.parking.retryingOne(part)),
      maxEventAttempts: this.maxEventAttempts,
    });
  }

  /** Where a projection (any partition of it) parked by this runner stopped: it will not fold past it (null: not parked here). */
  parkedAt(checkpoint: string): LogPosition | null {
    for (const part of this.partsOf.get(checkpoint) ?? [checkpoint]) {
      const parked = this.parking.parkedOne(part);
      if (parked) return parked.event.position;
    }
    return null;
  }

  /**
   * The newest position this runner knows a projection, or a partition, folded (held ones are
   * exact); a split projection stands where its least advanced partition does.
   */
  positionOf(checkpoint: string): LogPosition | null {
    const parts = this.partsOf.get(checkpoint);
    if (!parts) return this.partPositionOf(checkpoint);
    let least: LogPosition | null = null;
    for (const part of parts) {
      const position = this.partPositionOf(part);
      if (position === null) return null;
      if (least === null || position < least) least = position;
    }
    return least;
  }

  private partPositionOf(checkpoint: string): LogPosition | null {
    if (this.shownBefore?.has(checkpoint)) return this.shownBefore.get(checkpoint)!;
    return this.held.positionOf(checkpoint);
  }

  /** A reader waits for this runner's projections: a live batch gathering (`liveGatherMs`) is written now. */
  hurry(): void {
    this.follower.hurry();
  }

  /** Called after every batch this runner writes (read-your-writes listens). */
  onProgress(listener: () => void): () => void {
    return this.progress.listen(listener);
  }

  /** Takes what leases it can and starts folding; resolves after the first attempt, whatever its outcome. */
  async start(): Promise<void> {
    const firstAttempt = new Promise<void>((resolve) => (this.firstAttemptDone = resolve));
    this.supervisor = this.supervise();
    await firstAttempt;
  }

  /** Resolves once the projections held have folded everything that was in the log at the first claim. */
  async caughtUp(): Promise<void> {
    await this.firstCatchUp.wait();
  }

  /** Counts since start, for reports. */
  stats(): ProjectorRunnerStats {
    return this.counts.stats();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.leases.stopRenewing();
    this.parking.stop();
    this.wakeSupervisor?.();
    await this.follower.close().catch(() => undefined);
    await this.supervisor?.catch(() => undefined);
    await this.leases.release(this.running);
    this.held.clear();
  }

  private async supervise(): Promise<void> {
    let ensured = false;
    while (!this.stopped) {
      try {
        if (!ensured) {
          await this.readModels.ensureCollections([
            ...this.definitions.flatMap(physicalCollectionSpecs),
            { name: PROJECTOR_STATUS },
          ]);
          ensured = true;
        }
        await this.claim();
        this.leases.startRenewing();
        this.dropped = null;
        this.firstAttemptDone();
        if (this.held.all.length === 0) {
          // Another process holds every lease: keep trying, it may die.
          this.markCaughtUpIfDone();
          await this.pause(Math.max(50, this.leaseTtlMs / 3));
          continue;
        }
        await this.follow();
        this.backoff.reset();
      } catch (error) {
        if (this.stopped) break;
        this.leases.stopRenewing();
        await this.follower.close().catch(() => undefined);
        this.options.onError?.(error, {});
        this.dropped = messageOf(error);
        this.firstAttemptDone();
        await this.pause(error instanceof LeaseLostError ? 0 : this.backoff.next());
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSupervisor = () => {
        this.wakeSupervisor = null;
        done();
      };
    });
  }

  /** Takes the leases that are free, renews those held, and reads where each projection stands. */
  private async claim(): Promise<void> {
    this.leaseSetChanged = false;
    const taken = await this.leases.acquire();
    const before = this.running.join(',');
    const after = taken.map((part) => part.checkpoint);
    if (after.join(',') !== before) this.options.onLeasesChanged?.(after);
    this.held.clear();
    const checkpoints = await this.startingPositions();
    for (const part of this.parts) if (!after.includes(part.checkpoint)) this.parking.letGo(part.checkpoint);
    const startedEmpty = this.held.take(taken, this.parts, checkpoints, (checkpoint) => this.counts.of(checkpoint));
    this.folder = new BatchFolder(this.readModels, {
      fences: this.leases.fences(after),
      keepLeases: () => this.leases.keepWhileFolding(),
      startedEmpty,
      onProjectionFailed: (error) => this.parking.failed(error),
      onPartialWrite: () => this.progress.notify(),
    });
    await this.parking.clearStaleNotes(after);
    await this.firstCatchUp.noteHead(() => this.events.headPosition());
    this.progress.notify();
  }

  /**
   * Every part's checkpoint. A part without one, of a projection folded before under another
   * partition count (PROJECTOR_PARTITIONS changed), starts where that layout's least advanced
   * part stood (`layoutResumePosition`), not from the start of the log.
   */
  private async startingPositions(): Promise<Map<string, LogPosition>> {
    const checkpoints = await this.readModels.getCheckpoints(this.parts.map((part) => part.checkpoint));
    const unstarted = new Set(this.parts.filter((part) => !checkpoints.has(part.checkpoint)).map((part) => part.projection));
    if (unstarted.size === 0) return checkpoints;
    const earlier = await this.readModels.getCheckpoints([...unstarted].flatMap(everyLayoutCheckpoint));
    for (const part of this.parts) {
      if (checkpoints.has(part.checkpoint)) continue;
      const resume = layoutResumePosition(part.projection, earlier);
      if (resume !== null) checkpoints.set(part.checkpoint, resume);
    }
    return checkpoints;
  }

  /** Catches up from where the projections stand, then follows the log live, until the subscription ends or fails. */
  private async follow(): Promise<void> {
    do {
      this.refollow = false;
      await this.follower.follow(this.held.resumeFrom(this.folds), this.followHandlers);
    } while (this.refollow && !this.stopped && !this.leaseSetChanged);
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const started = performance.now();
    const folding = this.held.folding(this.folds);
    const destroys = batch.some((event) => this.destroying.has(event.type));
    if (destroys) this.shownBefore = new Map(this.held.all.map((slot) => [slot.checkpoint, slot.position]));
    let applied: Awaited<ReturnType<BatchFolder['fold']>>;
    try {
      applied = await this.folder!.fold(batch, folding);
      if (destroys) await this.overwriteFreedSpace();
    } finally {
      this.shownBefore = null;
    }
    this.backoff.reset();
    this.parking.forgetPassed(folding);
    this.counts.read(batch.length);
    this.options.recordBatch?.(batch.length, (performance.now() - started) / 1000);
    this.options.onProgress?.(batch[batch.length - 1].position, applied);
    this.progress.notify();
  }

  /**
   * Before the batch counts as folded (read-your-writes wakes after it), what the destroyed
   * documents left in the store's files is overwritten. A failure drops nothing: it is
   * reported, and the next destroying batch, or the next start, overwrites it.
   */
  private async overwriteFreedSpace(): Promise<void> {
    try {
      await this.readModels.overwriteFreedSpace?.();
    } catch (error) {
      this.options.onError?.(error, { freedSpace: true });
    }
  }

  /**
   * A store may build collections it created empty without their indexes (a rebuild writes
   * faster so); they are built once the catch-up is done, before it counts as caught up. One
   * collection at a time, the leases renewed between them when due: on SQLite each build is a
   * transaction without a turn of the event loop, and together they take seconds on a long log.
   */
  private async buildDeferredIndexes(): Promise<void> {
    for (const collection of this.held.collections()) {
      await this.leases.keepWhileFolding();
      await this.readModels.buildDeferredIndexes([collection]);
    }
  }

  /** Where the held projections not parked stand: a retrying one counts (it is caught up once it recovers, or is parked). */
  private activePositions(): (LogPosition | null)[] {
    return this.held.all.filter((s) => !this.parking.isParked(s.checkpoint)).map((s) => s.position);
  }

  private markCaughtUpIfDone(): void {
    this.firstCatchUp.check(this.activePositions());
  }
}
