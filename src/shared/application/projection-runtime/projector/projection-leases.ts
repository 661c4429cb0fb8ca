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
}

/**
 * The leases that let one worker fold a projection, or one partition of it: taken or renewed
 * by its checkpoint name (`<name>_v<version>`, a partition's `ProjectionPart.checkpoint`) at every claim and every third of their time while held, and named as
 * fences by every write, so a worker whose lease lapsed writes nothing.
 */
export class ProjectionLeases {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ReadModelStore,
    private readonly parts: readonly ProjectionPart[],
    private readonly options: ProjectionLeasesOptions,
  ) {}

  /** Takes the free leases and renews those held; resolves with the parts to fold (held and not parked). */
  async acquire(): Promise<ProjectionPart[]> {
    const { owner, ttlMs, isParked } = this.options;
    const held: ProjectionPart[] = [];
    for (const part of this.parts) {
      const name = part.checkpoint;
      if (isParked(name)) {
        await this.store.acquireLease(name, owner, ttlMs);
        continue;
      }
      if (await this.store.acquireLease(name, owner, ttlMs)) held.push(part);
    }
    return held;
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

  /** Gives these leases up (a stop), ignoring failures: unrenewed, they lapse anyway. */
  async release(checkpoints: readonly string[]): Promise<void> {
    for (const name of checkpoints) await this.store.releaseLease(name, this.options.owner).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    const held = await this.acquire();
    const current = this.options.folding();
    const changed = held.length !== current.length || held.some((part) => !current.includes(part.checkpoint));
    if (changed) await this.options.onChanged();
  }
}
