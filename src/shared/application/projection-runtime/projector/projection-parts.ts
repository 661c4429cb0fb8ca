import type { LogPosition, RecordedEvent } from '../../../domain/event';
import type { Document } from '../../../ports/read-model-store.port';
import { checkpointName, ProjectionDefinition } from '../../../../../projections/projection';

/** The most partitions a projection may be split into (PROJECTOR_PARTITIONS). */
export const MAX_PARTITIONS = 16;

/** Whose an event is for one part: its own, another part's, or every part's (each on its own documents). */
export type EventShare = 'mine' | 'other' | 'shared';

/**
 * One part of a projection's work: the whole projection (one partition, or a projection not
 * split), or partition `index` of `count`. Each part has a lease and a checkpoint of its own
 * (`checkpoint`), and writes only documents of its partition.
 */
export interface ProjectionPart {
  readonly definition: ProjectionDefinition;
  /** Its lease and checkpoint: `<name>_v<version>` whole, `<name>_v<version>#<index>/<count>` split. */
  readonly checkpoint: string;
  /** The projection's checkpoint name (`<name>_v<version>`): what readers wait for. */
  readonly projection: string;
  readonly index: number;
  readonly count: number;
  share(event: RecordedEvent): EventShare;
  /** Whether a stored document is this part's to change. */
  ownsDocument(document: Document): boolean;
}

/** The checkpoint (and lease) of partition `index` of `count` of a projection; the projection's own name when whole. */
export const partCheckpoint = (projection: string, index: number, count: number): string =>
  count === 1 ? projection : `${projection}#${index}/${count}`;

/** The projection a part's checkpoint belongs to (itself when whole). */
export const projectionOfPart = (checkpoint: string): string => checkpoint.replace(/#\d+\/\d+$/, '');

/**
 * Which partition a key falls in: FNV-1a over its UTF-16 code units, modulo the count. Stable
 * across processes and releases (it decides which documents each checkpoint covers).
 */
export function partitionOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** Refuses a partition count outside 1..MAX_PARTITIONS, naming the setting. */
export function checkPartitionCount(count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS) {
    throw new Error(`PROJECTOR_PARTITIONS must be a whole number from 1 to ${MAX_PARTITIONS} (got ${count})`);
  }
  return count;
}

/** The parts of each projection: `count` for those that declare a partitioning, one for the others. */
export function projectionParts(definitions: readonly ProjectionDefinition[], count = 1): ProjectionPart[] {
  checkPartitionCount(count);
  return definitions.flatMap((definition) => {
    const projection = checkpointName(definition);
    const partitioning = definition.partitioning;
    if (!partitioning || count === 1) {
      return [{ definition, checkpoint: projection, projection, index: 0, count: 1, share: () => 'mine', ownsDocument: () => true }];
    }
    return Array.from({ length: count }, (_, index): ProjectionPart => ({
      definition,
      checkpoint: partCheckpoint(projection, index, count),
      projection,
      index,
      count,
      share(event) {
        const key = partitioning.event(event);
        if (key === null) return 'shared';
        return partitionOf(key, count) === index ? 'mine' : 'other';
      },
      ownsDocument: (document) => partitionOf(partitioning.document(document), count) === index,
    }));
  });
}

/**
 * Every checkpoint name a projection's parts may have had under any partition count: where a
 * part that has none yet starts (see `startingPositions`).
 */
export function everyLayoutCheckpoint(projection: string): string[] {
  const names = [projection];
  for (let count = 2; count <= MAX_PARTITIONS; count++) for (let index = 0; index < count; index++) names.push(partCheckpoint(projection, index, count));
  return names;
}

/**
 * Where a projection's folding resumes under a new partition count: the least advanced part
 * of the most advanced earlier count whose parts all have a checkpoint (null: none, it folds
 * from the start). Each document records the position it reflects, so what that part's
 * partition already folded is skipped document by document.
 */
export function layoutResumePosition(projection: string, stored: ReadonlyMap<string, LogPosition>): LogPosition | null {
  let best: LogPosition | null = null;
  for (let count = 1; count <= MAX_PARTITIONS; count++) {
    const positions: LogPosition[] = [];
    for (let index = 0; index < count; index++) {
      const position = stored.get(partCheckpoint(projection, index, count));
      if (position === undefined) break;
      positions.push(position);
    }
    if (positions.length !== count) continue;
    const least = positions.reduce((a, b) => (a < b ? a : b));
    if (best === null || least > best) best = least;
  }
  return best;
}

/** The checkpoints of the partitions of each projection split in `count` (those not split are absent). */
export function splitProjections(definitions: readonly ProjectionDefinition[], count: number): Map<string, string[]> {
  const split = new Map<string, string[]>();
  for (const part of projectionParts(definitions, count)) {
    if (part.count > 1) split.set(part.projection, [...(split.get(part.projection) ?? []), part.checkpoint]);
  }
  return split;
}
