import { LogPosition } from '../../domain/event';
import type { ProjectionStatus, ProjectorRunner } from './projector-runner';

/**
 * What the rest of a process uses of its projectors (ProjectionWatch, health, readiness,
 * metrics): ProcessProjectors folding here, or the embedded server's view of its projector thread.
 */
export interface Projectors {
  readonly running: string[];
  start(): Promise<void>;
  holds(checkpoint: string): boolean;
  positionOf(checkpoint: string): LogPosition | null;
  parkedAt(checkpoint: string): LogPosition | null;
  status(): ProjectionStatus[];
  onProgress(listener: () => void): () => void;
  /** Someone waits for these projections to reach a position: those folded in the background write what they gather now. */
  hurry?(checkpoints: readonly string[]): void;
  stop(): Promise<void>;
}

/**
 * The projector runners of one process: one folds the versions that serve reads (with any
 * retired ones still listed), the other the versions building beside them (see
 * `buildingApart`), each with its own subscription. The process is ready once the serving
 * versions have caught up (those folded in the background too: a third runner, which writes
 * fewer, larger batches behind the others); the building ones start then and fold the log from its start in the
 * background, while the serving ones follow new events and acknowledge writes. Reads switch to a
 * building version once it has caught up (ProjectionVersions); it goes on folding in its own
 * runner until the process restarts.
 */
export class ProcessProjectors implements Projectors {
  private readonly runners: readonly ProjectorRunner[];
  private stopped = false;

  constructor(
    private readonly serving: ProjectorRunner,
    private readonly building: ProjectorRunner | null,
    /** The serving versions folded in the background (`ProjectionDefinition.background`), with a subscription of their own. */
    private readonly background: ProjectorRunner | null = null,
  ) {
    this.runners = [serving, ...(background ? [background] : []), ...(building ? [building] : [])];
  }

  /** Names of the projections this process holds and folds. */
  get running(): string[] {
    return this.runners.flatMap((runner) => runner.running);
  }

  /**
   * Takes the leases it can and folds: resolves once the serving versions have folded what was
   * in the log, having then started the building versions (which it does not wait for).
   */
  async start(): Promise<void> {
    await this.serving.start();
    await this.background?.start();
    await this.serving.caughtUp();
    await this.background?.caughtUp();
    if (this.building && !this.stopped) await this.building.start();
  }

  holds(checkpoint: string): boolean {
    return this.runners.some((runner) => runner.holds(checkpoint));
  }

  /** The newest position known for a projection: exact from the runner that holds it (each runner knows its own projections only). */
  positionOf(checkpoint: string): LogPosition | null {
    for (const runner of this.runners) {
      const position = runner.positionOf(checkpoint);
      if (position !== null) return position;
    }
    return null;
  }

  parkedAt(checkpoint: string): LogPosition | null {
    for (const runner of this.runners) {
      const parked = runner.parkedAt(checkpoint);
      if (parked !== null) return parked;
    }
    return null;
  }

  /** Every projection of the process as its runners see it (each reports its own). */
  status(): ProjectionStatus[] {
    return this.runners.flatMap((runner) => runner.status());
  }

  hurry(checkpoints: readonly string[]): void {
    if (this.background && checkpoints.some((checkpoint) => this.background!.holds(checkpoint))) this.background.hurry();
  }

  onProgress(listener: () => void): () => void {
    const offs = this.runners.map((runner) => runner.onProgress(listener));
    return () => offs.forEach((off) => off());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.runners.map((runner) => runner.stop()));
  }
}
