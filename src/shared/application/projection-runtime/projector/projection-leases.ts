import { LeaseFence, ReadModelStore } from '../../../ports/read-model-store.port';
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
 * so a worker whose lease lapsed writes nothing.
 *
 * Workers share the parts out: each holds a seat (a lease of its own among `WORKER_SEATS`),
 * and takes or keeps at most its fair share, the parts divided by the workers seated. One
 * that holds more (a worker joined) lets the excess go at its next renewal, for the newcomer
 * to take at its own; the parts of one that died lapse and are taken by the others.
 */
export class ProjectionLeases {
  private timer: NodeJS.Timeout | null = null;
  private seat: number | null = null;

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
    const { owner, ttlMs, isParked } = this.options;
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
    // A parked part's lease is kept but it is not folded: no other worker folds it into the same failure.
    return this.parts.filter((part) => mine.includes(part) && !isParked(part.checkpoint));
  }

  /** Takes or renews this worker's seat; resolves with how many workers are seated (distinct owners, itself included). */
  private async seatedWorkers(): Promise<number> {
    const { owner, ttlMs } = this.options;
    if (this.seat !== null && !(await this.store.acquireLease(seatLease(this.seat), owner, ttlMs))) this.seat = null;
    for (let seat = 0; this.seat === null && seat < WORKER_SEATS; seat++) {
      if (await this.store.acquireLease(seatLease(seat), owner, ttlMs)) this.seat = seat;
    }
    const now = (this.options.now ?? Date.now)();
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

  private async renew(): Promise<void> {
    const held = await this.acquire({ letGo: false });
    const current = this.options.folding();
    const changed = held.length !== current.length || held.some((part) => !current.includes(part.checkpoint));
    if (changed) await this.options.onChanged();
  }
}
