import { LeaseFence, LeaseLostError, ReadModelStore } from '../../../ports/read-model-store.port';
import { ProjectionPart } from './projection-parts';

export interface ProjectionLeasesOptions {
  /** Who takes the leases. */
  readonly owner: string;
  readonly ttlMs: number;
  /** A parked projection's lease is kept but it is not folded: no other worker folds it into the same failure. */
  readonly isParked: (checkpoint: string) => boolean;
  /** The projections folded under the leases now (the last claim). */
  readonly folding: () => readonly string[];
  /** A renewal found the leases it can fold differ from `folding()` (one was lost, or a free one taken). */
  readonly onChanged: () => Promise<void>;
  /** A renewal failed (the store). */
  readonly onFailed: (error: unknown) => void;
  /** false: takes every free lease, seated nowhere (the rebuild CLI, alone on what it rebuilds). Default true. */
  readonly shareOut?: boolean;
  /** The time leases' expiries are compared with (the store's clock). */
  readonly now?: () => number;
}

/** The most workers that share projections out (each holds one seat lease while it runs). */
export const WORKER_SEATS = 64;
export const seatLease = (seat: number): string => `projector-seat#${seat}`;
const SEATS = Array.from({ length: WORKER_SEATS }, (_, seat) => seatLease(seat));

/**
 * The leases that let one worker fold a projection, or one partition of it: taken or renewed
 * by its checkpoint name (`<name>_v<version>`, a partition's `ProjectionPart.checkpoint`) at
 * every claim and every third of their time while held, and named as fences by every write,
 * so a worker whose lease lapsed writes nothing. A timer renews them while the worker waits
 * for events; while it folds, the fold itself renews them when due (`keepWhileFolding`): a page
 * folded and written synchronously (SQLite) lets no timer run, however long it takes.
 *
 * Workers share the parts out: each holds a seat (a lease of its own among `WORKER_SEATS`),
 * and takes or keeps at most its fair share, the parts divided by the workers seated. One
 * that holds more (a worker joined) lets the excess go at its next renewal, for the newcomer
 * to take at its own; the parts of one that died lapse and are taken by the others.
 */
export class ProjectionLeases {
  private timer: NodeJS.Timeout | null = null;
  private seat: number | null = null;
  /** When the last claim or renewal began, on `now`'s clock: what it kept expires no sooner than a lease time later. */
  private renewedAt = -Infinity;
  /** The renewal under way, which the timer and the fold share. */
  private renewal: Promise<void> | null = null;
  /** A lease folded under that a renewal found held by another since the last claim: nothing more is written under it. */
  private lost: string | null = null;

  constructor(
    private readonly store: ReadModelStore,
    private readonly parts: readonly ProjectionPart[],
    private readonly options: ProjectionLeasesOptions,
  ) {}

  /**
   * Renews the leases held and takes free ones, up to this worker's fair share; resolves with
   * the parts to fold (held and not parked). The excess is let go, or with `letGo` false (a
   * renewal while folding) kept renewed and left out of the answer: the runner stops folding
   * it, and its next claim lets it go, so no batch in flight loses its lease.
   */
  async acquire({ letGo = true }: { letGo?: boolean } = {}): Promise<ProjectionPart[]> {
    // A renewal under way would judge what this claim takes by what it renewed before.
    await this.renewal?.catch(() => undefined);
    this.lost = null;
    return (await this.takeOrRenew(letGo)).folds;
  }

  /** What `acquire` does; also says which leases this worker holds now (those it folds, parked ones and, unless let go, the excess). */
  private async takeOrRenew(letGo: boolean): Promise<{ folds: ProjectionPart[]; holds: ReadonlySet<string> }> {
    const { owner, ttlMs, isParked } = this.options;
    const startedAt = this.now();
    const fair = this.options.shareOut === false ? this.parts.length : Math.ceil(this.parts.length / (await this.seatedWorkers()));
    const stored = await this.store.leases(this.parts.map((part) => part.checkpoint));
    const mine: ProjectionPart[] = [];
    for (const part of this.parts) {
      if (stored.get(part.checkpoint)?.owner === owner && (await this.store.acquireLease(part.checkpoint, owner, ttlMs))) mine.push(part);
    }
    const excess = mine.splice(fair);
    if (letGo) for (const part of excess) await this.store.releaseLease(part.checkpoint, owner);
    for (const part of this.parts) {
      if (mine.length >= fair) break;
      if (stored.get(part.checkpoint)?.owner === owner) continue; // renewed above, or lost since
      if (await this.store.acquireLease(part.checkpoint, owner, ttlMs)) mine.push(part);
    }
    this.renewedAt = startedAt;
    const holds = new Set([...mine, ...(letGo ? [] : excess)].map((part) => part.checkpoint));
    // A parked part's lease is kept but it is not folded: no other worker folds it into the same failure.
    return { folds: this.parts.filter((part) => mine.includes(part) && !isParked(part.checkpoint)), holds };
  }

  /** Takes or renews this worker's seat; resolves with how many workers are seated (distinct owners, itself included). */
  private async seatedWorkers(): Promise<number> {
    const { owner, ttlMs } = this.options;
    if (this.seat !== null && !(await this.store.acquireLease(seatLease(this.seat), owner, ttlMs))) this.seat = null;
    for (let seat = 0; this.seat === null && seat < WORKER_SEATS; seat++) {
      if (await this.store.acquireLease(seatLease(seat), owner, ttlMs)) this.seat = seat;
    }
    const now = this.now();
    const owners = new Set([owner]);
    for (const lease of (await this.store.leases(SEATS)).values()) if (lease.expiresAtMs > now) owners.add(lease.owner);
    return owners.size;
  }

  /** Renews (and takes free ones) every third of the lease time, until `stopRenewing`; idempotent. */
  startRenewing(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.renew().catch((error) => this.options.onFailed(error));
    }, this.options.ttlMs / 3);
  }

  stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Asked by the fold between its events and before each write, while renewing: renews the leases
   * when a third of their time has passed since the last claim or renewal (otherwise null,
   * nothing to wait for), so that no page outlives them however long it takes; and rejects with
   * LeaseLostError once a lease folded under is found held by another, so that the fold stops
   * before it writes (its write would be refused by the fence anyway).
   */
  keepWhileFolding(): Promise<void> | null {
    if (this.lost !== null) return Promise.reject(new LeaseLostError(this.lost, this.options.owner));
    if (!this.timer || this.now() - this.renewedAt < this.options.ttlMs / 3) return null;
    return this.renew().then(() => {
      if (this.lost !== null) throw new LeaseLostError(this.lost, this.options.owner);
    });
  }

  /** What every write of these projections is fenced by. */
  fences(checkpoints: readonly string[]): LeaseFence[] {
    return checkpoints.map((name) => ({ name, owner: this.options.owner }));
  }

  /** Gives these leases up, and the seat (a stop), ignoring failures: unrenewed, they lapse anyway. */
  async release(checkpoints: readonly string[]): Promise<void> {
    const seat = this.seat === null ? [] : [seatLease(this.seat)];
    this.seat = null;
    for (const name of [...checkpoints, ...seat]) await this.store.releaseLease(name, this.options.owner).catch(() => undefined);
  }

  /** Renews the leases (one renewal at a time: the timer's and the fold's share it). */
  private renew(): Promise<void> {
    this.renewal ??= this.renewOnce().finally(() => (this.renewal = null));
    return this.renewal;
  }

  private async renewOnce(): Promise<void> {
    const { folds, holds } = await this.takeOrRenew(false);
    const current = this.options.folding();
    this.lost ??= current.find((checkpoint) => !holds.has(checkpoint)) ?? null;
    const changed = folds.length !== current.length || folds.some((part) => !current.includes(part.checkpoint));
    if (changed) await this.options.onChanged();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
