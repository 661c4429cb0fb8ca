import { LogPosition, positionAfter } from '../domain/event';
import { ReadModelStore } from '../ports/read-model-store.port';
import type { ProjectorRunner } from './projector-runner';
import type { ProjectionVersions } from './projection-versions';
import { projectionLagError, ReadYourWrites, stoppedBeforeProjectedError } from './read-your-writes';

interface Waiter {
  readonly position: LogPosition;
  readonly projections: readonly string[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Knows how far each projection has folded the log — exactly, from this process's runner, for
 * the projections it holds; from the stored checkpoints for the others — and lets writes and
 * subscriptions wait until the projections they read have reached a position.
 *
 * Waits are bounded in every deployment (past the timeout: `projectionLagError`, which says
 * the change was saved). The stored checkpoints are read in one query per poll, one poll per
 * process while anything waits on a projection held elsewhere, never by a query per waiting write.
 */
export class ProjectionWatch implements ReadYourWrites {
  private readonly stored = new Map<string, LogPosition | null>();
  private waiters: Waiter[] = [];
  private polling = false;
  private closed = false;
  private readonly offProgress: () => void;

  constructor(
    private readonly readModels: ReadModelStore,
    /** Every projection's checkpoint name: what "all projections" means. */
    private readonly all: readonly string[],
    private readonly runner: ProjectorRunner | null,
    private readonly timeoutMs: number,
    private readonly pollMs = 10,
    /** When projections are listed in several versions: waits are for the version serving reads. */
    private readonly versions?: ProjectionVersions,
  ) {
    this.offProgress = runner ? runner.onProgress(() => this.settle()) : () => undefined;
  }

  waitFor(position: LogPosition, requested?: readonly string[]): Promise<void> {
    const projections = this.versions ? this.versions.servingCheckpoints(requested) : (requested ?? this.all);
    if (projections.every((name) => this.reached(name, position))) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(projectionLagError(this.timeoutMs));
      }, this.timeoutMs);
      const waiter: Waiter = { position, projections, resolve, reject, timer };
      this.waiters.push(waiter);
      if (projections.some((name) => !this.heldHere(name))) this.poll();
    });
  }

  /** The newest position known for a projection (held here: exact; elsewhere: as last polled). */
  positionOf(name: string): LogPosition | null {
    return this.heldHere(name) ? this.runner!.positionOf(name) : (this.stored.get(name) ?? null);
  }

  /** Reads every stored checkpoint once, in one query (health uses it; waits poll by themselves). */
  async refresh(): Promise<void> {
    const names = this.all.filter((name) => !this.heldHere(name));
    const positions = names.length ? await this.readModels.getCheckpoints(names) : new Map<string, LogPosition>();
    for (const name of names) this.stored.set(name, positions.get(name) ?? null);
    this.settle();
  }

  close(): void {
    this.closed = true;
    this.offProgress();
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(stoppedBeforeProjectedError());
    }
  }

  private heldHere(name: string): boolean {
    return this.runner !== null && this.runner.holds(name);
  }

  private reached(name: string, position: LogPosition): boolean {
    const folded = this.positionOf(name);
    return folded !== null && !positionAfter(position, folded);
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.projections.every((name) => this.reached(name, waiter.position))) return true;
      clearTimeout(waiter.timer);
      waiter.resolve();
      return false;
    });
  }

  /** One loop per process, running only while a wait needs a projection held elsewhere. */
  private poll(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    void (async () => {
      try {
        while (!this.closed && this.waiters.some((w) => w.projections.some((name) => !this.heldHere(name)))) {
          try {
            await this.refresh();
          } catch {
            // The store failed this poll; the waits stay bounded by their timeout.
          }
          await new Promise((r) => setTimeout(r, this.pollMs));
        }
      } finally {
        this.polling = false;
      }
    })();
  }
}
