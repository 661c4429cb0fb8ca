import { randomUUID } from 'node:crypto';
import { LogPosition, RecordedEvent, positionAfter } from '../../domain/event';
import { EventStore, LogSubscription } from '../../ports/event-store.port';
import { BatchTooLargeError, DocumentChange, LeaseFence, LeaseLostError, ReadModelStore, StoredDocument } from '../../ports/read-model-store.port';
import { checkpointName, isRef, physicalCollection, physicalCollectionSpecs, ProjectionDefinition, Target } from '../../../../projections/projection';
import { Backoff } from '../operations/backoff';
import { recordProjectorBatch } from '../../observability/metrics';
import { messageOf } from '../../domain/errors';

export interface ProjectorRunnerOptions {
  /** Who holds the leases, for operators reading the lease table. */
  readonly owner?: string;
  readonly maxBatch?: number;
  /** Events read and written per transaction while catching up (default: 10,000 until first caught up, then 2,000). */
  readonly catchUpPage?: number;
  readonly leaseTtlMs?: number;
  /** First and longest wait before resubscribing after a drop. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * How many times the same event may fail a projection's `evolve` before that projection is
   * parked. Between attempts the projection waits alone (backoff as after a drop); the others fold on.
   */
  readonly maxEventAttempts?: number;
  /** Every drop (the runner resubscribes by itself) and every parked projection. */
  readonly onError?: (error: unknown, context: { readonly projection?: string; readonly parked?: boolean }) => void;
  readonly onProgress?: (position: LogPosition, eventsApplied: number) => void;
  /** The set of projections this runner holds changed (taken over, lost): operators read it in the log. */
  readonly onLeasesChanged?: (held: readonly string[]) => void;
}

/** Where one projection stands, for health, logs and read-your-writes. */
export interface ProjectionStatus {
  /** The checkpoint name, `<name>_v<version>`. */
  readonly name: string;
  /**
   * `running`: this runner folds it; `waiting_for_lease`: another process holds it;
   * `dropped`: the runner failed and will resubscribe; `retrying`: an event failed its
   * `evolve`, and the projection alone waits to try it again; `parked`: one event keeps failing
   * it, and the projection stopped alone.
   */
  readonly state: 'running' | 'waiting_for_lease' | 'dropped' | 'retrying' | 'parked';
  /** The last position folded (its checkpoint), null before the first event. */
  readonly position: LogPosition | null;
  readonly error?: string;
  /** The event a parked or retrying projection stopped at. */
  readonly failedEvent?: { readonly position: LogPosition; readonly type: string; readonly stream: string };
  /** `retrying` only: the attempts made at the event, and how many park the projection. */
  readonly attempts?: { readonly made: number; readonly max: number };
}

/** `evolve` or `targets` of one projection threw on one event. */
export class ProjectionEventError extends Error {
  constructor(
    readonly projection: string,
    readonly event: RecordedEvent,
    cause: unknown,
  ) {
    super(
      `Projection ${projection} failed on event ${event.type} at position ${event.position} (${event.streamName}): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
    this.name = 'ProjectionEventError';
  }
}

interface Slot {
  readonly definition: ProjectionDefinition;
  readonly checkpoint: string;
  readonly handles: ReadonlySet<string>;
  /** Where this version keeps a collection the projection names. */
  readonly collection: (name: string) => string;
  /** Its entry in the runner's counts. */
  readonly stats: { events: number; documents: number };
  position: LogPosition | null;
}

/** One projection's share of one event of a batch: the documents it targets, or what `targets` threw. */
interface Step {
  readonly index: number;
  readonly slot: Slot;
  readonly targets: readonly Target[];
  readonly failure?: { readonly error: unknown };
}

/** What one projection did since its runner started (the rebuild CLI reports it). */
export interface ProjectionRunStats {
  /** Events of its types that it folded. */
  readonly events: number;
  /** Documents it wrote or removed; a document changed by several events of one batch counts once. */
  readonly documents: number;
}

export interface ProjectorRunnerStats {
  /** Events read from the log, whatever their type. */
  readonly eventsRead: number;
  /** By checkpoint name (`<name>_v<version>`). */
  readonly projections: Readonly<Record<string, ProjectionRunStats>>;
}

/**
 * Which document ids a pass may have written, as a fixed-size Bloom filter (2 MiB whatever the
 * log's length): "no" is certain, "maybe" is checked in the store. A pass that starts from an
 * empty collection (its projection never folded anything) skips the store read for every id the
 * filter has not seen: during a rebuild nearly every read would find nothing.
 */
class WrittenIds {
  private static readonly BITS = 1 << 24;
  private readonly bits = new Uint32Array(WrittenIds.BITS >>> 5);

  add(collection: string, id: string): void {
    const [h1, h2] = hashes(collection, id);
    for (let i = 0; i < 3; i++) {
      const bit = (h1 + i * h2) & (WrittenIds.BITS - 1);
      this.bits[bit >>> 5] |= 1 << (bit & 31);
    }
  }

  mayHold(collection: string, id: string): boolean {
    const [h1, h2] = hashes(collection, id);
    for (let i = 0; i < 3; i++) {
      const bit = (h1 + i * h2) & (WrittenIds.BITS - 1);
      if ((this.bits[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit FNV-1a hashes of collection and id (double hashing gives the filter's probes). */
function hashes(collection: string, id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < collection.length; i++) {
    const c = collection.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  a = Math.imul(a ^ 0xff, 0x01000193);
  b = Math.imul(b ^ 0xff, 0x5bd1e995);
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [a >>> 0, (b >>> 0) | 1];
}

type Cached = { document: StoredDocument['document'] | null; position: LogPosition | null; dirty: boolean };

/** Where parked projections are recorded, so every process (and /health) sees them. */
export const PROJECTOR_STATUS = 'projector_status';

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
 */
export class ProjectorRunner {
  private readonly owner: string;
  private readonly maxBatch: number;
  /** Events read per page while catching up. */
  private readonly catchUpPage: number;
  /**
   * The same before the process has first caught up (a start on a long log, a rebuild): the
   * process is not ready yet, and larger transactions write each touched index page to the
   * WAL fewer times (measured: a third less wall time per event on SQLite).
   */
  private readonly firstCatchUpPage: number;
  private readonly leaseTtlMs: number;
  private readonly maxEventAttempts: number;
  private readonly backoff: Backoff;
  private slots: Slot[] = [];
  /** Last known positions of every projection, held or not (checkpoints read at claim time). */
  private readonly positions = new Map<string, LogPosition | null>();
  private readonly parked = new Map<string, { error: string; event: RecordedEvent }>();
  /** Projections that failed on an event and wait, alone, to try it again. */
  private readonly retrying = new Map<string, { error: string; event: RecordedEvent; attempts: number; at: number }>();
  private retryTimer: NodeJS.Timeout | null = null;
  /** Set when retrying projections are due: the fold restarts from the least advanced one, without a drop. */
  private refollow = false;
  private readonly failures = new Map<string, number>();
  /** Changes per store write: the store's bound, halved whenever the store finds a write too large. */
  private changesPerWrite: number;
  private subscription: LogSubscription | null = null;
  private supervisor: Promise<void> | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  private wakeSupervisor: (() => void) | null = null;
  private leaseSetChanged = false;
  private stopped = false;
  private dropped: { error: string; since: number } | null = null;
  private caughtUpOnce = false;
  private headAtStart: LogPosition | null = null;
  private caughtUpWaiters: (() => void)[] = [];
  private progressListeners = new Set<() => void>();
  private eventsRead = 0;
  /**
   * Physical collections of the projections that had never folded anything when this runner
   * took them (no checkpoint: none of their documents was ever written, as documents and
   * checkpoints commit together), and the ids written into them since.
   */
  private readonly startedEmpty = new Set<string>();
  private writtenIds = new WrittenIds();
  private readonly counts = new Map<string, { events: number; documents: number }>();

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly definitions: readonly ProjectionDefinition[],
    private readonly options: ProjectorRunnerOptions = {},
  ) {
    this.owner = options.owner ?? `projector-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.maxBatch = options.maxBatch ?? 500;
    this.catchUpPage = options.catchUpPage ?? 2_000;
    this.firstCatchUpPage = options.catchUpPage ?? 10_000;
    this.leaseTtlMs = options.leaseTtlMs ?? 15_000;
    this.maxEventAttempts = options.maxEventAttempts ?? 3;
    this.backoff = new Backoff(options.backoff?.initialMs ?? 100, options.backoff?.maxMs ?? 5_000);
    this.changesPerWrite = readModels.batchLimit?.changes ?? Infinity;
    const owners = new Map<string, string>();
    for (const definition of definitions) {
      for (const spec of physicalCollectionSpecs(definition)) {
        // A failing projection stops alone only if no other one writes its documents.
        const other = owners.get(spec.name);
        if (other) throw new Error(`Projections ${other} and ${checkpointName(definition)} both write the collection ${spec.name}`);
        owners.set(spec.name, checkpointName(definition));
      }
    }
  }

  /** Names of the projections this runner holds and folds. */
  get running(): string[] {
    return this.slots.map((s) => s.checkpoint);
  }

  /** Whether this runner holds and folds a projection (no allocation: read-your-writes asks per write). */
  holds(checkpoint: string): boolean {
    for (const slot of this.slots) if (slot.checkpoint === checkpoint) return true;
    return false;
  }

  /** Every projection of the group as this runner sees it. */
  status(): ProjectionStatus[] {
    const held = new Set(this.running);
    return this.definitions.map((definition) => {
      const name = checkpointName(definition);
      const parked = this.parked.get(name);
      const position = this.positionOf(name);
      if (parked) {
        const { event } = parked;
        return {
          name,
          state: 'parked',
          position,
          error: parked.error,
          failedEvent: { position: event.position, type: event.type, stream: event.streamName },
        };
      }
      if (this.dropped) return { name, state: 'dropped', position, error: this.dropped.error };
      const retrying = this.retrying.get(name);
      if (retrying && held.has(name)) {
        const { event } = retrying;
        return {
          name,
          state: 'retrying',
          position,
          error: retrying.error,
          failedEvent: { position: event.position, type: event.type, stream: event.streamName },
          attempts: { made: retrying.attempts, max: this.maxEventAttempts },
        };
      }
      return { name, state: held.has(name) ? 'running' : 'waiting_for_lease', position };
    });
  }

  /** Where a projection parked by this runner stopped: it will not fold past it (null: not parked here). */
  parkedAt(checkpoint: string): LogPosition | null {
    return this.parked.get(checkpoint)?.event.position ?? null;
  }

  /** The newest position this runner knows a projection folded (held ones are exact). */
  positionOf(checkpoint: string): LogPosition | null {
    const slot = this.slots.find((s) => s.checkpoint === checkpoint);
    return slot ? slot.position : (this.positions.get(checkpoint) ?? null);
  }

  /** Called after every batch this runner writes (read-your-writes listens). */
  onProgress(listener: () => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  /** Takes what leases it can and starts folding; resolves after the first attempt, whatever its outcome. */
  async start(): Promise<void> {
    const firstAttempt = new Promise<void>((resolve) => (this.firstAttemptDone = resolve));
    this.supervisor = this.supervise();
    await firstAttempt;
  }

  private firstAttemptDone: () => void = () => undefined;

  /** Resolves once the projections held have folded everything that was in the log at the first claim. */
  async caughtUp(): Promise<void> {
    if (this.caughtUpOnce) return;
    await new Promise<void>((resolve) => this.caughtUpWaiters.push(resolve));
  }

  /** Counts since start, for reports. */
  stats(): ProjectorRunnerStats {
    const projections: Record<string, ProjectionRunStats> = {};
    for (const [name, c] of this.counts) projections[name] = { ...c };
    return { eventsRead: this.eventsRead, projections };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopRenewing();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.wakeSupervisor?.();
    await this.subscription?.close().catch(() => undefined);
    await this.supervisor?.catch(() => undefined);
    for (const slot of this.slots) await this.readModels.releaseLease(slot.checkpoint, this.owner).catch(() => undefined);
    this.slots = [];
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
        this.startRenewing();
        this.dropped = null;
        this.firstAttemptDone();
        if (this.slots.length === 0) {
          // Another process holds every lease: keep trying, it may die.
          this.markCaughtUpIfDone();
          await this.pause(Math.max(50, this.leaseTtlMs / 3));
          continue;
        }
        await this.follow();
        this.backoff.reset();
      } catch (error) {
        if (this.stopped) break;
        this.stopRenewing();
        await this.subscription?.close().catch(() => undefined);
        this.noteFailure(error);
        this.firstAttemptDone();
        await this.pause(error instanceof LeaseLostError ? 0 : this.backoff.next());
      }
    }
  }

  private noteFailure(error: unknown): void {
    this.options.onError?.(error, {});
    this.dropped = { error: messageOf(error), since: Date.now() };
  }

  /**
   * One projection failed on an event (its `targets` or `evolve` threw): it stops there alone,
   * while the others fold on, and tries the event again after a backoff; after
   * `maxEventAttempts` failures on the same event it is parked.
   */
  private projectionFailed(error: ProjectionEventError): void {
    const { projection, event } = error;
    const key = `${projection}@${event.position}`;
    const attempts = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempts);
    this.retrying.delete(projection);
    if (attempts >= this.maxEventAttempts) {
      this.parked.set(projection, { error: messageOf(error), event });
      this.options.onError?.(error, { projection, parked: true });
      void this.recordParked(projection).catch(() => undefined);
      // Writes waiting for it learn now that it will not get there.
      this.notifyProgress();
      this.markCaughtUpIfDone();
      return;
    }
    this.options.onError?.(error, { projection });
    const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 100, maxMs: 5_000 };
    this.retrying.set(projection, { error: messageOf(error), event, attempts, at: Date.now() + Math.min(maxMs, initialMs * 2 ** (attempts - 1)) });
    this.scheduleRetry();
  }

  /** Wakes the fold when the earliest retrying projection is due. */
  private scheduleRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.retrying.size === 0 || this.stopped) return;
    const at = Math.min(...[...this.retrying.values()].map((r) => r.at));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const now = Date.now();
      for (const [name, r] of this.retrying) if (r.at <= now) this.retrying.delete(name);
      this.scheduleRetry();
      // The fold restarts from where the due ones stand; the others skip what they folded.
      this.refollow = true;
      void this.subscription?.close();
    }, Math.max(0, at - Date.now()));
  }

  /** Parked projections are written down so that API processes report them in /health. */
  private async recordParked(checkpoint: string): Promise<void> {
    const parked = this.parked.get(checkpoint)!;
    await this.readModels.applyBatch(
      [
        {
          collection: PROJECTOR_STATUS,
          kind: 'put',
          document: {
            _id: checkpoint,
            state: 'parked',
            error: parked.error,
            event_position: parked.event.position,
            event_type: parked.event.type,
            event_stream: parked.event.streamName,
            owner: this.owner,
            at: new Date().toISOString(),
          },
          position: parked.event.position,
        },
      ],
      {},
    );
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

  /** Renews held leases and takes free ones every third of their time; a change restarts the subscription. */
  private startRenewing(): void {
    if (this.leaseTimer) return;
    this.leaseTimer = setInterval(() => {
      void this.renew().catch((error) => this.failSubscription(error));
    }, this.leaseTtlMs / 3);
  }

  private stopRenewing(): void {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
  }

  private async renew(): Promise<void> {
    const held = await this.acquireLeases();
    const current = this.slots.map((s) => s.checkpoint);
    const changed = held.length !== current.length || held.some((d) => !current.includes(checkpointName(d)));
    if (changed && !this.stopped) {
      this.leaseSetChanged = true;
      this.wakeSupervisor?.();
      await this.subscription?.close();
    }
  }

  private failure: unknown = null;

  /** Ends the current subscription with an error: the supervisor drops and resubscribes. */
  private failSubscription(error: unknown): void {
    this.failure = error;
    void this.subscription?.close();
  }

  private async acquireLeases(): Promise<ProjectionDefinition[]> {
    const held: ProjectionDefinition[] = [];
    for (const definition of this.definitions) {
      const name = checkpointName(definition);
      if (this.parked.has(name)) {
        // Keep holding a parked projection, so that no other worker folds it into the same failure.
        await this.readModels.acquireLease(name, this.owner, this.leaseTtlMs);
        continue;
      }
      if (await this.readModels.acquireLease(name, this.owner, this.leaseTtlMs)) held.push(definition);
    }
    return held;
  }

  /** Takes the leases that are free, renews those held, and reads where each projection stands. */
  private async claim(): Promise<void> {
    this.leaseSetChanged = false;
    const held = await this.acquireLeases();
    const before = this.running.join(',');
    const after = held.map(checkpointName);
    if (after.join(',') !== before) this.options.onLeasesChanged?.(after);
    this.slots = [];
    this.changesPerWrite = this.readModels.batchLimit?.changes ?? Infinity;
    const checkpoints = await this.readModels.getCheckpoints(this.definitions.map(checkpointName));
    for (const definition of this.definitions) {
      const name = checkpointName(definition);
      this.positions.set(name, checkpoints.get(name) ?? null);
      if (!after.includes(name)) this.retrying.delete(name);
    }
    this.startedEmpty.clear();
    this.writtenIds = new WrittenIds();
    for (const definition of held) {
      const checkpoint = checkpointName(definition);
      if (this.positions.get(checkpoint) == null) for (const spec of physicalCollectionSpecs(definition)) this.startedEmpty.add(spec.name);
      const physical = new Map(definition.collections.map((spec) => [spec.name, physicalCollection(spec.name, definition.version)]));
      this.slots.push({
        definition,
        checkpoint,
        handles: new Set(definition.handles),
        collection: (name) => physical.get(name) ?? physicalCollection(name, definition.version),
        stats: this.count(checkpoint),
        position: this.positions.get(checkpoint) ?? null,
      });
    }
    // A projection this runner takes on gets another chance: its old "parked" note goes.
    const stale = (await this.readModels.find(PROJECTOR_STATUS, { where: { state: 'parked' } })).filter((d) =>
      this.slots.some((s) => s.checkpoint === d._id && !this.parked.has(s.checkpoint)),
    );
    if (stale.length) await this.readModels.applyBatch(stale.map((d) => ({ collection: PROJECTOR_STATUS, kind: 'delete', id: d._id })), {});
    if (this.headAtStart === null && !this.caughtUpOnce) this.headAtStart = await this.events.headPosition();
    this.notifyProgress();
  }

  /**
   * Catches up from the least advanced checkpoint by whole pages of the log (a rebuild reads
   * nothing event by event), then follows it live, until the subscription ends or fails.
   */
  private async follow(): Promise<void> {
    do {
      this.refollow = false;
      await this.followOnce();
    } while (this.refollow && !this.stopped && !this.leaseSetChanged);
  }

  /** Whether a held projection folds now (not parked, not waiting for a retry). */
  private folds(slot: Slot): boolean {
    return !this.parked.has(slot.checkpoint) && !this.retrying.has(slot.checkpoint);
  }

  private async followOnce(): Promise<void> {
    // From the least advanced projection that folds (each skips what it already folded); with
    // none folding, from the most advanced one: nothing is folded until a retry is due.
    const folding = this.slots.filter((s) => this.folds(s));
    const positions = (folding.length ? folding : this.slots).map((s) => s.position);
    const earlier = (a: LogPosition, b: LogPosition) => (a < b ? a : b);
    const later = (a: LogPosition, b: LogPosition) => (a < b ? b : a);
    let from = positions.includes(null) ? null : (positions as LogPosition[]).reduce(folding.length ? earlier : later);
    this.failure = null;
    for (;;) {
      if (this.leaseSetChanged || this.stopped || this.refollow) return;
      if (this.failure) throw this.failure;
      const page = await this.events.readAll({ after: from, maxCount: this.caughtUpOnce ? this.catchUpPage : this.firstCatchUpPage });
      if (page.length === 0) break;
      await this.applyBatch(page);
      from = page[page.length - 1].position;
      if (!this.caughtUpOnce && this.reachedHeadAtStart()) await this.buildDeferredIndexes();
      this.markCaughtUpIfDone();
      // The stores may answer synchronously (SQLite): without a turn of the event loop between
      // pages, a long catch-up would starve the lease renewal (the lease lapses mid-rebuild)
      // and every request of the process.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await this.buildDeferredIndexes();
    this.markCaughtUpIfDone();
    const subscription = this.events.subscribeToAll({ after: from });
    this.subscription = subscription;
    if (this.leaseSetChanged || this.stopped || this.refollow) await subscription.close();
    const iterator = subscription[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<RecordedEvent>> | null = null;
    let batch: RecordedEvent[] = [];
    const IDLE = Symbol('idle');
    try {
      for (;;) {
        pending ??= iterator.next();
        // Take every event that is already buffered, then write them as one batch.
        const next =
          batch.length === 0
            ? await pending
            : await Promise.race([pending, new Promise<typeof IDLE>((r) => setImmediate(() => r(IDLE)))]);
        if (next === IDLE || (next as IteratorResult<RecordedEvent>).done) {
          if (batch.length && !this.failure) await this.applyBatch(batch);
          batch = [];
          this.markCaughtUpIfDone();
          if (next !== IDLE) break;
          continue;
        }
        pending = null;
        batch.push((next as IteratorResult<RecordedEvent>).value);
        if (batch.length >= this.maxBatch) {
          await this.applyBatch(batch);
          batch = [];
          this.markCaughtUpIfDone();
        }
      }
    } finally {
      await subscription.close().catch(() => undefined);
    }
    if (this.failure) throw this.failure;
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const started = performance.now();
    const slots = this.slots.filter((s) => this.folds(s));
    const fences: LeaseFence[] = this.slots.map((s) => ({ name: s.checkpoint, owner: this.owner }));
    const limit = this.readModels.batchLimit;
    // The batch's documents by physical collection and id: read once, folded in memory, written together.
    const cache = new Map<string, Map<string, Cached>>();
    const documentsOf = (collection: string): Map<string, Cached> => {
      let documents = cache.get(collection);
      if (!documents) cache.set(collection, (documents = new Map()));
      return documents;
    };
    let applied = 0;
    let done = 0; // events of the batch already written (before a selection or the store's bound forced a flush)
    const documentsBy = new Map<string, number>();
    /** The changes folded since the last flush, against the store's bound. */
    const pending = { changes: 0, bytes: 0 };
    /** Projections that failed in this batch: the index of the event they stopped at. */
    const stoppedAt = new Map<Slot, number>();

    /**
     * Writes what is folded so far. Checkpoints move to the last event every projection folded
     * whole: `upTo` (exclusive), or the event a failing projection stopped at. Documents may
     * already reflect a later event than their projection's checkpoint (a flush within an
     * event): redone, that event skips them by the position each records.
     */
    const flush = async (upTo: number) => {
      const changes: DocumentChange[] = [];
      for (const [collection, documents] of cache) {
        const startedEmpty = this.startedEmpty.has(collection);
        for (const [id, c] of documents) {
          if (!c.dirty) continue;
          if (startedEmpty) this.writtenIds.add(collection, id);
          changes.push(c.document ? { collection, kind: 'put', document: c.document, position: c.position! } : { collection, kind: 'delete', id });
          c.dirty = false;
        }
      }
      pending.changes = 0;
      pending.bytes = 0;
      const checkpoints: Record<string, LogPosition> = {};
      for (const slot of slots) {
        const end = Math.min(upTo, stoppedAt.get(slot) ?? upTo);
        if (end > 0 && positionAfter(batch[end - 1].position, slot.position)) checkpoints[slot.checkpoint] = batch[end - 1].position;
      }
      if (changes.length || Object.keys(checkpoints).length) await this.write(changes, checkpoints, fences);
      for (const slot of slots) if (checkpoints[slot.checkpoint]) slot.position = checkpoints[slot.checkpoint];
      for (const [checkpoint, n] of documentsBy) this.count(checkpoint).documents += n;
      documentsBy.clear();
      done = upTo;
      if (upTo < batch.length) this.notifyProgress();
    };
    /** Whether the changes folded since the last flush reach the store's bound: then they are written, within an event if need be. */
    const full = () => limit !== undefined && (pending.changes >= limit.changes || pending.bytes >= limit.bytes);

    // What each projection targets is pure, so it is known before anything is folded: the
    // documents named by key are then read with one query per collection, not one each.
    const steps: Step[] = [];
    const wanted = new Map<string, Set<string>>();
    // The slots folding each event type, found once per batch rather than asked of every slot per event.
    const slotsByType = new Map<string, Slot[]>();
    for (let index = 0; index < batch.length; index++) {
      const event = batch[index];
      let handling = slotsByType.get(event.type);
      if (!handling) slotsByType.set(event.type, (handling = slots.filter((slot) => slot.handles.has(event.type))));
      for (const slot of handling) {
        if (!positionAfter(event.position, slot.position)) continue;
        let targets: readonly Target[];
        try {
          targets = slot.definition.targets(event);
        } catch (error) {
          // Thrown in turn below, so that an earlier event's failure is still the one reported.
          steps.push({ index, slot, targets: [], failure: { error } });
          continue;
        }
        steps.push({ index, slot, targets });
        for (const target of targets) {
          if (!isRef(target)) continue;
          const collection = slot.collection(target.collection);
          if (this.startedEmpty.has(collection) && !this.writtenIds.mayHold(collection, target.id)) continue;
          let ids = wanted.get(collection);
          if (!ids) wanted.set(collection, (ids = new Set()));
          ids.add(target.id);
        }
      }
    }
    for (const [collection, ids] of wanted) {
      const documents = documentsOf(collection);
      for (const stored of await this.readModels.getStoredMany(collection, [...ids])) {
        documents.set(stored.document._id, { document: stored.document, position: stored.position, dirty: false });
      }
    }

    const fold = (slot: Slot, event: RecordedEvent, collection: string, entry: Cached, id: string) => {
      if (entry.position !== null && !positionAfter(event.position, entry.position)) return; // already folded
      let next;
      try {
        next = slot.definition.evolve(entry.document, event, { collection, id });
      } catch (error) {
        throw new ProjectionEventError(slot.checkpoint, event, error);
      }
      if (next === entry.document) return;
      entry.document = next === null || next._id === id ? next : { ...next, _id: id };
      entry.position = event.position;
      if (!entry.dirty) {
        documentsBy.set(slot.checkpoint, (documentsBy.get(slot.checkpoint) ?? 0) + 1);
        pending.changes++;
        // Sized once per write, as it first changes: a document rarely grows much within a batch.
        if (limit) pending.bytes += entry.document ? JSON.stringify(entry.document).length : 64;
      }
      entry.dirty = true;
      applied++;
    };

    for (const { index, slot, targets, failure } of steps) {
      if (stoppedAt.has(slot)) continue;
      const event = batch[index];
      slot.stats.events++;
      try {
        if (failure) throw new ProjectionEventError(slot.checkpoint, event, failure.error);
        for (const target of targets) {
          const documents = documentsOf(slot.collection(target.collection));
          if (isRef(target)) {
            // Not cached: it was not in the store when the batch began (read above, or known
            // never written), and nothing in the batch has made it since.
            let entry = documents.get(target.id);
            if (!entry) documents.set(target.id, (entry = { document: null, position: null, dirty: false }));
            fold(slot, event, target.collection, entry, target.id);
            if (full()) await flush(index);
            continue;
          }
          // A selection reads the store, so everything folded so far must be in it first.
          if (index > done) await flush(index);
          const refs: string[] = [];
          for (const stored of await this.readModels.findStored(slot.collection(target.collection), { where: target.where })) {
            const id = stored.document._id;
            const cached = documents.get(id);
            if (!cached || !cached.dirty) documents.set(id, { document: stored.document, position: stored.position, dirty: false });
            if (documents.get(id)!.document) refs.push(id);
          }
          for (const id of refs) {
            fold(slot, event, target.collection, documents.get(id)!, id);
            if (full()) await flush(index);
          }
        }
      } catch (error) {
        if (!(error instanceof ProjectionEventError)) throw error;
        // This projection stops at the event, keeping what it folded before; the others go on.
        stoppedAt.set(slot, index);
        this.projectionFailed(error);
      }
    }
    await flush(batch.length);
    this.backoff.reset();
    // A projection that folded past the event it once failed on is no longer in trouble there.
    for (const k of this.failures.keys()) {
      const [checkpoint, position] = k.split('@');
      const slot = slots.find((s) => s.checkpoint === checkpoint);
      if (slot && slot.position && slot.position >= position) this.failures.delete(k);
    }
    this.eventsRead += batch.length;
    recordProjectorBatch(batch.length, (performance.now() - started) / 1000);
    this.options.onProgress?.(batch[batch.length - 1].position, applied);
    this.notifyProgress();
  }

  /**
   * Writes a flush's changes, with its checkpoints in the last write: in parts of at most
   * `changesPerWrite` changes, halved whenever the store finds a part too large for one
   * transaction. Parts before the last move no checkpoint: a crash between them redoes the
   * events, and the position each document records skips what was written.
   */
  private async write(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, LogPosition>>, fences: readonly LeaseFence[]): Promise<void> {
    let start = 0;
    for (;;) {
      const end = Math.min(changes.length, start + this.changesPerWrite);
      const last = end === changes.length;
      try {
        await this.readModels.applyBatch(start === 0 && last ? changes : changes.slice(start, end), last ? checkpoints : {}, fences);
      } catch (error) {
        if (!(error instanceof BatchTooLargeError) || end - start <= 1) throw error;
        this.changesPerWrite = Math.max(1, Math.floor((end - start) / 2));
        continue;
      }
      if (last) return;
      start = end;
    }
  }

  private count(checkpoint: string): { events: number; documents: number } {
    let c = this.counts.get(checkpoint);
    if (!c) this.counts.set(checkpoint, (c = { events: 0, documents: 0 }));
    return c;
  }

  private notifyProgress(): void {
    for (const listener of [...this.progressListeners]) listener();
  }

  /**
   * A store may build collections it created empty without their indexes (a rebuild writes
   * faster so); they are built once the catch-up is done, before it counts as caught up.
   */
  private async buildDeferredIndexes(): Promise<void> {
    await this.readModels.buildDeferredIndexes(this.slots.flatMap((s) => physicalCollectionSpecs(s.definition).map((c) => c.name)));
  }

  private reachedHeadAtStart(): boolean {
    const head = this.headAtStart;
    // A retrying projection counts: it is caught up once it recovers, or is parked.
    const active = this.slots.filter((s) => !this.parked.has(s.checkpoint));
    return !(head !== null && active.some((s) => positionAfter(head, s.position)));
  }

  private markCaughtUpIfDone(): void {
    if (this.caughtUpOnce || !this.reachedHeadAtStart()) return;
    this.caughtUpOnce = true;
    for (const resolve of this.caughtUpWaiters.splice(0)) resolve();
  }
}
