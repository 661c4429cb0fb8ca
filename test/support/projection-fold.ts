import { IN_MEMORY, SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { RecordedEvent, positionAfter } from '../../src/shared/domain/event';
import { DocumentChange, LeaseFence } from '../../src/shared/ports/read-model-store.port';
import { BatchFolder } from '../../src/shared/application/projection-runtime/projector/batch-folder';
import { ProjectionEventError } from '../../src/shared/application/projection-runtime/projector/projection-event-error';
import { projectionSlot } from '../../src/shared/application/projection-runtime/projector/projection-slot';
import { Document, physicalCollection, physicalCollectionSpecs, ProjectionDefinition } from '../../projections/projection';

/**
 * Folds events into a projection's documents the way the runner does, for projection specs:
 * through the runner's own batch folder (documents named by key read up front, selections
 * answered by the store's query, the position each document records guarding it, what was
 * folded written before a selection) into a real SQLite read-model store, in memory (the fast
 * tier opens no SQLite file).
 *
 * The events are one batch of a projection that never folded anything. Where their positions
 * go back to events given before (the same events again), the rest is folded as the runner
 * folds a redelivery: a new pass from a checkpoint rewound to before them, where each document
 * skips what it reflects. An event new to the call whose position goes back is refused: no log
 * delivers it so (make the events in the order they are listed). An event that fails the
 * projection fails the call.
 *
 * Returns the documents as the store holds them, keyed `<collection>|<id>` by the collection's
 * name in the projection, in the order they were first written.
 */
export async function project(definition: ProjectionDefinition, events: readonly RecordedEvent[]): Promise<Map<string, Document>> {
  const readModels = new FirstWrites(IN_MEMORY);
  try {
    const collections = physicalCollectionSpecs(definition);
    await readModels.ensureCollections(collections);
    const failures: ProjectionEventError[] = [];
    const onProjectionFailed = (error: ProjectionEventError) => failures.push(error);
    let folder = new BatchFolder(readModels, { startedEmpty: collections.map((c) => c.name), onProjectionFailed });
    for (const batch of inLogOrder(events)) {
      await folder.fold(batch, [projectionSlot(definition, null)]);
      if (failures.length) throw failures[0];
      folder = new BatchFolder(readModels, { onProjectionFailed });
    }

    const documents: [key: string, document: Document, order: number][] = [];
    for (const { name } of definition.collections) {
      for (const document of await readModels.find(physicalCollection(name, definition.version))) {
        documents.push([`${name}|${document._id}`, document, readModels.order(physicalCollection(name, definition.version), document._id)]);
      }
    }
    return new Map(documents.sort((a, b) => a[2] - b[2]).map(([key, document]) => [key, document]));
  } finally {
    await readModels.close();
  }
}

/** The events cut where their positions go back: each part is in log order, as a batch read from the log is. */
function inLogOrder(events: readonly RecordedEvent[]): RecordedEvent[][] {
  const batches: RecordedEvent[][] = [];
  const given = new Set<string>();
  for (const event of events) {
    const current = batches[batches.length - 1];
    const previous = current?.[current.length - 1];
    if (previous && positionAfter(event.position, previous.position)) current.push(event);
    else if (!previous || given.has(event.id)) batches.push([event]);
    else throw new Error(`${event.type} ${event.id} (position ${event.position}) comes after ${previous.type} ${previous.id} (position ${previous.position}): a log delivers events in position order`);
    given.add(event.id);
  }
  return batches;
}

/** The real store, noting the order in which documents were first written (a removed one starts again). */
class FirstWrites extends SqliteReadModelStore {
  private readonly firstWritten = new Map<string, number>();
  private writes = 0;

  override async applyBatch(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, string>>, fences?: readonly LeaseFence[]) {
    await super.applyBatch(changes, checkpoints, fences);
    for (const change of changes) {
      const key = `${change.collection}|${change.kind === 'put' ? change.document._id : change.id}`;
      if (change.kind === 'delete') this.firstWritten.delete(key);
      else if (!this.firstWritten.has(key)) this.firstWritten.set(key, this.writes++);
    }
  }

  order(collection: string, id: string): number {
    return this.firstWritten.get(`${collection}|${id}`) ?? Infinity;
  }
}
