import { LogPosition, positionAfter } from '../../domain/event';
import { DomainError } from '../../domain/errors';
import { ReadModelStore } from '../../ports/read-model-store.port';
import { PROJECTOR_STATUS } from './projector-runner';
import type { ProjectionVersions } from './projection-versions';
import { projectionOfPart } from './projector/projection-parts';
import { AwaitedProjections, projectionLagError, projectionParkedError, ReadYourWrites, stoppedBeforeProjectedError } from '../write-path/read-your-writes';

interface Waiter {
  readonly position: LogPosition;
  /** Reads of the parked notes begun before the wait: only a later one may end it. */
  readonly notesReadBefore: number;
  readonly projections: readonly string[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/** What the watch asks of the projectors folding in this process (a runner, or all of a process's: ProcessProjectors). */
export interface LocalProjectors {
  holds(checkpoint: string): boolean;
  positionOf(checkpoint: string): LogPosition | null;
  parkedAt(checkpoint: string): LogPosition | null;
  onProgress(listener: () => void): () => void;
  /** Projections folded in the background write what they gather now (someone waits for them). */
  hurry?(checkpoints: readonly string[]): void;
}

/** How often a poll also reads which projections other processes parked (checkpoints are read every poll). */
const PARKED_POLL_MS = 250;

/**
 * Knows how far each projection has folded the log — exactly, from this process's runner, for
 * the projections it holds; from the stored checkpoints for the others — and lets writes and
 * subscriptions wait until the projections they read have reached a position.
 *
 * Waits are bounded in every deployment (past the timeout: `projectionLagError`, which says
 * the change was saved). A wait on a projection parked short of its position ends at once
 * (`projectionParkedError`): it would not get there by itself. The stored checkpoints are read
 * in one query per poll, one poll per process while anything waits on a projection held
 * elsewhere, never by a query per waiting write.
 */
export class ProjectionWatch implements ReadYourWrites {
  private readonly stored = new Map<string, LogPosition | null>();
  /** The newest position of a write answered without waiting for a projection (`leftToReaders`), by the name it was left under. */
  private readonly leftToReadersAt = new Map<string, LogPosition>();
  /** Projections parked by other processes (their notes in the store), as last polled. */
  private parkedElsewhere = new Set<string>();
  private parkedPolledAt = 0;
  /** Reads of the notes begun, and which one `parkedElsewhere` comes from. */
  private notesReads = 0;
  private parkedElsewhereRead = 0;
  private waiters: Waiter[] = [];
  private polling = false;
  private closed = false;
  private readonly offProgress: () => void;

  constructor(
    private readonly readModels: ReadModelStore,
    /** Every projection's checkpoint name: what "all projections" means. */
    private readonly all: readonly string[],
    private readonly runner: LocalProjectors | null,
    private readonly timeoutMs: number,
    private readonly pollMs = 10,
    /** When projections are listed in several versions: waits are for the version serving reads. */
    private readonly versions?: ProjectionVersions,
  ) {
    this.offProgress = runner ? runner.onProgress(() => this.settle()) : () => undefined;
  }

  waitFor(position: LogPosition, awaited?: AwaitedProjections): Promise<void> {
    const projections = this.awaitedCheckpoints(awaited);
    const behind = projections.filter((name) => !this.reached(name, position));
    if (behind.length === 0) return Promise.resolve();
    const parked = behind.filter((name) => this.parkedHere(name));
    if (parked.length) return Promise.reject(projectionParkedError(parked));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(projectionLagError(this.timeoutMs));
      }, this.timeoutMs);
      const waiter: Waiter = { position, notesReadBefore: this.notesReads, projections, resolve, reject, timer };
      this.waiters.push(waiter);
      this.runner?.hurry?.(behind);
      if (projections.some((name) => !this.heldHere(name))) this.poll();
    });
  }

  leftToReaders(position: LogPosition, projections: readonly string[]): void {
    for (const name of projections) {
      const before = this.leftToReadersAt.get(name);
      if (before === undefined || positionAfter(position, before)) this.leftToReadersAt.set(name, position);
    }
  }

  async readersCaughtUp(projections: readonly string[]): Promise<void> {
    let through: LogPosition | null = null;
    for (const name of projections) {
      const left = this.leftToReadersAt.get(name);
      if (left !== undefined && (through === null || positionAfter(left, through))) through = left;
    }
    if (through === null) return;
    try {
      await this.waitFor(through, projections);
    } catch (error) {
      if (!(error instanceof DomainError && error.reason === 'projection_lag' && projections.some((name) => this.parkedHere(name)))) throw error;
    }
  }

  foldsHere(projections: readonly string[]): boolean {
    const names = this.versions ? this.versions.servingCheckpoints(projections) : projections;
    return names.every((name) => this.heldHere(name) && !this.parkedHere(name));
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

  private awaitedCheckpoints(awaited: AwaitedProjections | undefined): readonly string[] {
    if (awaited && !Array.isArray(awaited)) {
      const { folding } = awaited as { readonly folding: readonly string[] };
      // Without the definitions (tests of the watch alone), every projection might fold them.
      return this.versions ? this.versions.foldingCheckpoints(folding) : this.all;
    }
    const named = awaited as readonly string[] | undefined;
    return this.versions ? this.versions.servingCheckpoints(named) : (named ?? this.all);
  }

  private heldHere(name: string): boolean {
    return this.runner !== null && this.runner.holds(name);
  }

  /** Parked by this process's runner: known exactly. */
  private parkedHere(name: string): boolean {
    return this.runner !== null && this.runner.parkedAt(name) !== null;
  }

  /** Parked here, or by another process according to notes read since the wait began (a note read before may be gone). */
  private parkedFor(waiter: Waiter, name: string): boolean {
    return this.parkedHere(name) || (this.parkedElsewhereRead > waiter.notesReadBefore && this.parkedElsewhere.has(name));
  }

  private reached(name: string, position: LogPosition): boolean {
    const folded = this.positionOf(name);
    return folded !== null && !positionAfter(position, folded);
  }

  /**
   * The projections a waiter needs now: the versions serving reads at this moment, so that a
   * wait begun before a switch ends only once the version now read has the write too.
   */
  private servingFor(waiter: Waiter): readonly string[] {
    return this.versions ? this.versions.servingCheckpoints(waiter.projections) : waiter.projections;
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => {
      const behind = this.servingFor(waiter).filter((name) => !this.reached(name, waiter.position));
      const parked = behind.filter((name) => this.parkedFor(waiter, name));
      if (behind.length && !parked.length) return true;
      clearTimeout(waiter.timer);
      if (parked.length) waiter.reject(projectionParkedError(parked));
      else waiter.resolve();
      return false;
    });
  }

  /** Which projections other processes parked: their notes, read at most every PARKED_POLL_MS. */
  private async pollParked(): Promise<void> {
    if (Date.now() - this.parkedPolledAt < PARKED_POLL_MS) return;
    this.parkedPolledAt = Date.now();
    const read = ++this.notesReads;
    const notes = await this.readModels.find(PROJECTOR_STATUS, { where: { state: 'parked' } });
    // A parked partition (its own note) holds its whole projection back.
    this.parkedElsewhere = new Set(notes.map((note) => projectionOfPart(note._id)));
    this.parkedElsewhereRead = read;
  }

  /** One loop per process, running only while a wait needs a projection held elsewhere. */
  private poll(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    void (async () => {
      try {
        while (!this.closed && this.waiters.some((w) => this.servingFor(w).some((name) => !this.heldHere(name)))) {
          try {
            await this.pollParked();
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
