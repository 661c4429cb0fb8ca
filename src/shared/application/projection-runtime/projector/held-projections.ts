import { LogPosition } from '../../../domain/event';
import { physicalCollectionSpecs } from '../../../../../projections/projection';
import { ProjectionPart } from './projection-parts';
import { ProjectionSlot, projectionSlot } from './projection-slot';

/**
 * The projections a runner holds as of its last claim, each with where it stands (exact: it
 * moves them), and the last known positions of the others (their checkpoints at that claim).
 */
export class HeldProjections {
  private slots: ProjectionSlot[] = [];
  private readonly positions = new Map<string, LogPosition | null>();

  get all(): readonly ProjectionSlot[] {
    return this.slots;
  }

  get names(): string[] {
    return this.slots.map((s) => s.checkpoint);
  }

  /** No allocation: read-your-writes asks per write. */
  holds(checkpoint: string): boolean {
    for (const slot of this.slots) if (slot.checkpoint === checkpoint) return true;
    return false;
  }

  positionOf(checkpoint: string): LogPosition | null {
    const slot = this.slots.find((s) => s.checkpoint === checkpoint);
    return slot ? slot.position : (this.positions.get(checkpoint) ?? null);
  }

  clear(): void {
    this.slots = [];
  }

  /**
   * Takes `held` from where the checkpoints read at a claim put them (`group`: every part of
   * every projection of the runner); returns the physical collections of those that never
   * folded anything (no part of their projection ever wrote one of their documents).
   */
  take(
    held: readonly ProjectionPart[],
    group: readonly ProjectionPart[],
    checkpoints: ReadonlyMap<string, LogPosition>,
    counts: (checkpoint: string) => { events: number; documents: number },
  ): string[] {
    for (const part of group) this.positions.set(part.checkpoint, checkpoints.get(part.checkpoint) ?? null);
    // A partition that never folded shares its collections with the others, which may have.
    const folded = new Set(group.filter((part) => this.positions.get(part.checkpoint) !== null).map((part) => part.projection));
    const startedEmpty = new Set<string>();
    this.slots = held.map((part) => {
      const position = this.positions.get(part.checkpoint) ?? null;
      if (!folded.has(part.projection)) for (const spec of physicalCollectionSpecs(part.definition)) startedEmpty.add(spec.name);
      return projectionSlot(part, position, counts(part.checkpoint));
    });
    return [...startedEmpty];
  }

  /** The held projections `folds` says fold now. */
  folding(folds: (checkpoint: string) => boolean): ProjectionSlot[] {
    return this.slots.filter((s) => folds(s.checkpoint));
  }

  /**
   * Where to read the log from: the least advanced projection that folds (each skips what it
   * already folded); with none folding, the most advanced one: nothing is folded until a retry
   * is due.
   */
  resumeFrom(folds: (checkpoint: string) => boolean): LogPosition | null {
    const folding = this.folding(folds);
    const positions = (folding.length ? folding : this.slots).map((s) => s.position);
    const earlier = (a: LogPosition, b: LogPosition) => (a < b ? a : b);
    const later = (a: LogPosition, b: LogPosition) => (a < b ? b : a);
    return positions.includes(null) ? null : (positions as LogPosition[]).reduce(folding.length ? earlier : later);
  }

  /** The physical collections of the held projections. */
  collections(): string[] {
    return [...new Set(this.slots.flatMap((s) => physicalCollectionSpecs(s.definition).map((c) => c.name)))];
  }
}
