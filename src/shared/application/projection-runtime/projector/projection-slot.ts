import { LogPosition, RecordedEvent } from '../../../domain/event';
import { checkpointName, physicalCollection, physicalCollectionSpecs, ProjectionDefinition } from '../../../../../projections/projection';
import { EventShare, ProjectionPart, projectionParts } from './projection-parts';

/** What one projection did since its runner started (the rebuild CLI reports it). */
export interface ProjectionRunStats {
  /** Events of its types that it folded. */
  readonly events: number;
  /** Documents it wrote or removed; a document changed by several events of one batch counts once. */
  readonly documents: number;
}

/** A projection (or one partition of it: a part) taken into a pass over the log: where it stands, and what it did. */
export interface ProjectionSlot {
  readonly definition: ProjectionDefinition;
  /** Its checkpoint and its lease: `<name>_v<version>`, or a partition's (`ProjectionPart.checkpoint`). */
  readonly checkpoint: string;
  /** Whose an event is (a part folds only its own and the shared ones). */
  readonly share: (event: RecordedEvent) => EventShare;
  /** Whether a stored document is this slot's to change. */
  readonly ownsDocument: ProjectionPart['ownsDocument'];
  readonly handles: ReadonlySet<string>;
  /** Where this version keeps a collection the projection names. */
  readonly collection: (name: string) => string;
  /** Its counts, added to as it folds. */
  readonly stats: { events: number; documents: number };
  /** The last position it folded (its checkpoint), null before the first event. */
  position: LogPosition | null;
}

export function projectionSlot(
  projection: ProjectionDefinition | ProjectionPart,
  position: LogPosition | null,
  stats: { events: number; documents: number } = { events: 0, documents: 0 },
): ProjectionSlot {
  const part = 'definition' in projection ? projection : projectionParts([projection])[0];
  const { definition } = part;
  const physical = new Map(definition.collections.map((spec) => [spec.name, physicalCollection(spec.name, definition.version)]));
  return {
    definition,
    checkpoint: part.checkpoint,
    share: part.share,
    ownsDocument: part.ownsDocument,
    handles: new Set(definition.handles),
    collection: (name) => physical.get(name) ?? physicalCollection(name, definition.version),
    stats,
    position,
  };
}

/** Refuses projections that write one collection together: a failing projection stops alone only if no other one writes its documents. */
export function assertOneWriterPerCollection(definitions: readonly ProjectionDefinition[]): void {
  const owners = new Map<string, string>();
  // A projection's partitions share its collections (each writes its own documents): it counts once.
  for (const definition of new Set(definitions)) {
    for (const spec of physicalCollectionSpecs(definition)) {
      const other = owners.get(spec.name);
      if (other) throw new Error(`Projections ${other} and ${checkpointName(definition)} both write the collection ${spec.name}`);
      owners.set(spec.name, checkpointName(definition));
    }
  }
}
