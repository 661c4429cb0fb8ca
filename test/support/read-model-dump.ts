import type { ReadModelStore } from '../../src/shared/ports/read-model-store.port';
import { physicalCollectionSpecs, ProjectionDefinition } from '../../projections/projection';

/**
 * Every document of these projections' collections, with the position each reflects, sorted
 * by collection and id: two builds of the same log compare equal when they folded the same.
 */
export async function dumpReadModels(store: ReadModelStore, projections: readonly ProjectionDefinition[]): Promise<Record<string, unknown[]>> {
  const dump: Record<string, unknown[]> = {};
  for (const spec of projections.flatMap(physicalCollectionSpecs)) {
    const stored = await store.findStored(spec.name);
    dump[spec.name] = stored.sort((a, b) => (a.document._id < b.document._id ? -1 : a.document._id > b.document._id ? 1 : 0));
  }
  return dump;
}
