import { LogPosition } from '../../../domain/event';
import { checkpointName, physicalCollectionSpecs, ProjectionDefinition } from '../../../../../projections/projection';
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
   * Takes `held` from where the checkpoints read at a claim put them (`group`: every
   * projection of the runner); returns the physical collections of those that never
   * folded anything (none of their documents was ever written).
   */
  take(
    held: readonly ProjectionDefinition[],
    group: readonly ProjectionDefinition[],
    checkpoints: ReadonlyMap<string, LogPosition>,
    counts: (checkpoint: string) => { events: number; documents: number },
  ): string[] {
    for (const definition of group) this.positions.set(checkpointName(definition), checkpoints.get(checkpointName(definition)) ?? null);
    const startedEmpty: string[] = [];
    this.slots = held.map((definition) => {
      const checkpoint = checkpointName(definition);
      const position = this.positions.get(checkpoint) ?? null;
      if (position === null) for (const spec of physicalCollectionSpecs(definition)) startedEmpty.push(spec.name);
      return projectionSlot(definition, position, counts(checkpoint));
    });
    return startedEmpty;
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
    return this.slots.flatMap((s) => physicalCollectionSpecs(s.definition).map((c) => c.name));
  }
}
