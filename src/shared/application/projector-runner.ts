import { randomUUID } from 'node:crypto';
import { LogPosition, RecordedEvent, positionAfter } from '../domain/event';
import { EventStore, LogSubscription } from '../ports/event-store.port';
import { DocumentChange, ReadModelStore, StoredDocument } from '../ports/read-model-store.port';
import { checkpointName, isRef, ProjectionDefinition } from '../../../projections/projection';

export interface ProjectorRunnerOptions {
  /** Who holds the leases, for operators reading the lease table. */
  readonly owner?: string;
  readonly maxBatch?: number;
  readonly leaseTtlMs?: number;
  readonly onError?: (error: unknown) => void;
  readonly onProgress?: (position: LogPosition, eventsApplied: number) => void;
}

interface Slot {
  readonly definition: ProjectionDefinition;
  readonly checkpoint: string;
  readonly handles: ReadonlySet<string>;
  position: LogPosition | null;
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

type Cached = { document: StoredDocument['document'] | null; position: LogPosition | null; dirty: boolean };

/**
 * Folds the log into read models for a group of projections that this process holds the
 * leases of. One catch-up-then-live subscription feeds the whole group; each batch of
 * document changes is written together with every projection's checkpoint, so a crash
 * never leaves a half-applied batch, and a redelivered event is skipped by the position
 * each document records.
 */
export class ProjectorRunner {
  private readonly owner: string;
  private readonly maxBatch: number;
  private readonly leaseTtlMs: number;
  private slots: Slot[] = [];
  private subscription: LogSubscription | null = null;
  private loop: Promise<void> | null = null;
  private leaseTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The newest position this process has folded (for in-process read-your-writes). */
  private processed: LogPosition | null = null;
  private waiters: { position: LogPosition; resolve: () => void }[] = [];
  private caughtUpOnce = false;
  private caughtUpWaiters: (() => void)[] = [];
  private eventsRead = 0;
  private readonly counts = new Map<string, { events: number; documents: number }>();

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly definitions: readonly ProjectionDefinition[],
    private readonly options: ProjectorRunnerOptions = {},
  ) {
    this.owner = options.owner ?? `projector-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.maxBatch = options.maxBatch ?? 500;
    this.leaseTtlMs = options.leaseTtlMs ?? 15_000;
  }

  /** Names of the projections this runner holds and folds. */
  get running(): string[] {
    return this.slots.map((s) => s.checkpoint);
  }

  async start(): Promise<void> {
    await this.readModels.ensureCollections(this.definitions.flatMap((d) => d.collections));
    await this.claim();
    this.leaseTimer = setInterval(() => void this.claim().catch((e) => this.options.onError?.(e)), this.leaseTtlMs / 3);
    this.leaseTimer.unref();
  }

  /** Resolves once the group has folded everything that was in the log when it started. */
  async caughtUp(): Promise<void> {
    if (this.caughtUpOnce || this.slots.length === 0) return;
    await new Promise<void>((resolve) => this.caughtUpWaiters.push(resolve));
  }

  /** Resolves when every held projection has folded the log up to `position`. */
  waitFor(position: LogPosition): Promise<void> {
    if (!positionAfter(position, this.processed)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ position, resolve }));
  }

  /** Counts since start, for reports. */
  stats(): ProjectorRunnerStats {
    const projections: Record<string, ProjectionRunStats> = {};
    for (const [name, c] of this.counts) projections[name] = { ...c };
    return { eventsRead: this.eventsRead, projections };
  }

  private count(checkpoint: string): { events: number; documents: number } {
    let c = this.counts.get(checkpoint);
    if (!c) this.counts.set(checkpoint, (c = { events: 0, documents: 0 }));
    return c;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    await this.subscription?.close();
    await this.loop?.catch(() => undefined);
    for (const slot of this.slots) await this.readModels.releaseLease(slot.checkpoint, this.owner).catch(() => undefined);
    this.slots = [];
  }

  /** Takes the leases that are free, renews those held, and (re)starts the loop when the set grew. */
  private async claim(): Promise<void> {
    if (this.stopped) return;
    const held: ProjectionDefinition[] = [];
    for (const definition of this.definitions) {
      if (await this.readModels.acquireLease(checkpointName(definition), this.owner, this.leaseTtlMs)) held.push(definition);
    }
    const current = new Set(this.slots.map((s) => s.checkpoint));
    const changed = held.length !== current.size || held.some((d) => !current.has(checkpointName(d)));
    if (!changed) return;
    await this.subscription?.close();
    await this.loop?.catch(() => undefined);
    this.slots = [];
    for (const definition of held) {
      const checkpoint = checkpointName(definition);
      this.slots.push({
        definition,
        checkpoint,
        handles: new Set(definition.handles),
        position: await this.readModels.getCheckpoint(checkpoint),
      });
    }
    if (this.slots.length === 0) return;
    // Start after the least advanced checkpoint; each slot skips what it already folded.
    const from = this.slots.some((s) => s.position === null)
      ? null
      : this.slots.map((s) => s.position!).reduce((a, b) => (a < b ? a : b));
    const head = await this.events.headPosition();
    if (head === null || !positionAfter(head, from)) this.markCaughtUp();
    this.runFrom(from, head);
  }

  private runFrom(from: LogPosition | null, headAtStart: LogPosition | null): void {
    const subscription = this.events.subscribeToAll({ after: from });
    this.subscription = subscription;
    this.loop = (async () => {
      const iterator = subscription[Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<RecordedEvent>> | null = null;
      let batch: RecordedEvent[] = [];
      const IDLE = Symbol('idle');
      for (;;) {
        pending ??= iterator.next();
        // Take every event that is already buffered, then write them as one batch.
        const next =
          batch.length === 0
            ? await pending
            : await Promise.race([pending, new Promise<typeof IDLE>((r) => setImmediate(() => r(IDLE)))]);
        if (next === IDLE || (next as IteratorResult<RecordedEvent>).done) {
          if (batch.length) await this.applyBatch(batch);
          batch = [];
          if (headAtStart && this.processed && !positionAfter(headAtStart, this.processed)) this.markCaughtUp();
          if (next !== IDLE) return;
          continue;
        }
        pending = null;
        batch.push((next as IteratorResult<RecordedEvent>).value);
        if (batch.length >= this.maxBatch) {
          await this.applyBatch(batch);
          batch = [];
          if (headAtStart && this.processed && !positionAfter(headAtStart, this.processed)) this.markCaughtUp();
        }
      }
    })().catch((error) => {
      if (!this.stopped) this.options.onError?.(error);
    });
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const cache = new Map<string, Cached>();
    const key = (collection: string, id: string) => `${collection}\u0000${id}`;
    let applied = 0;
    let done = 0; // events of the batch already written (before a selection forced a flush)

    const flush = async (upTo: number) => {
      const changes: DocumentChange[] = [];
      for (const [k, c] of cache) {
        if (!c.dirty) continue;
        const collection = k.slice(0, k.indexOf('\u0000'));
        changes.push(
          c.document
            ? { collection, kind: 'put', document: c.document, position: c.position! }
            : { collection, kind: 'delete', id: k.slice(k.indexOf('\u0000') + 1) },
        );
        c.dirty = false;
        const holder = this.slots.find((s) => s.definition.collections.some((spec) => spec.name === collection));
        if (holder) this.count(holder.checkpoint).documents++;
      }
      const last = batch[upTo - 1].position;
      const checkpoints: Record<string, LogPosition> = {};
      for (const slot of this.slots) if (positionAfter(last, slot.position)) checkpoints[slot.checkpoint] = last;
      if (changes.length || Object.keys(checkpoints).length) await this.readModels.applyBatch(changes, checkpoints);
      for (const slot of this.slots) if (checkpoints[slot.checkpoint]) slot.position = last;
      done = upTo;
    };

    for (let i = 0; i < batch.length; i++) {
      const event = batch[i];
      for (const slot of this.slots) {
        if (!slot.handles.has(event.type) || !positionAfter(event.position, slot.position)) continue;
        this.count(slot.checkpoint).events++;
        for (const target of slot.definition.targets(event)) {
          const refs: { collection: string; id: string }[] = [];
          if (isRef(target)) {
            const k = key(target.collection, target.id);
            if (!cache.has(k)) {
              const stored = await this.readModels.getStored(target.collection, target.id);
              cache.set(k, { document: stored?.document ?? null, position: stored?.position ?? null, dirty: false });
            }
            refs.push(target);
          } else {
            // A selection reads the store, so everything folded so far must be in it first.
            if (i > done) await flush(i);
            for (const stored of await this.readModels.findStored(target.collection, { where: target.where })) {
              const k = key(target.collection, stored.document._id);
              const cached = cache.get(k);
              if (!cached || !cached.dirty) cache.set(k, { document: stored.document, position: stored.position, dirty: false });
              if (cache.get(k)!.document) refs.push({ collection: target.collection, id: stored.document._id });
            }
          }
          for (const ref of refs) {
            const entry = cache.get(key(ref.collection, ref.id))!;
            if (entry.position !== null && !positionAfter(event.position, entry.position)) continue; // already folded
            const next = slot.definition.evolve(entry.document, event, ref);
            if (next === entry.document) continue;
            entry.document = next ? { ...next, _id: ref.id } : null;
            entry.position = event.position;
            entry.dirty = true;
            applied++;
          }
        }
      }
    }
    await flush(batch.length);
    this.eventsRead += batch.length;
    this.processed = batch[batch.length - 1].position;
    this.options.onProgress?.(this.processed, applied);
    this.waiters = this.waiters.filter((w) => {
      if (positionAfter(w.position, this.processed)) return true;
      w.resolve();
      return false;
    });
  }

  private markCaughtUp(): void {
    if (this.caughtUpOnce) return;
    this.caughtUpOnce = true;
    for (const resolve of this.caughtUpWaiters.splice(0)) resolve();
  }
}
