import type { RecordedEvent } from '../src/shared/domain/event';
import type { EventOfType, ParleyEvent } from './events';
import type { Document, DocumentRef, ProjectionDefinition } from './projection';
import { isRef } from './projection';

let position = 0;

/**
 * A recorded event as a store would deliver it, for projection unit tests. Its data is typed
 * by its type name as the write side declares it, so a spec cannot feed a shape no decider
 * emits (or one a renamed field left behind).
 */
export function recorded<T extends ParleyEvent['type']>(streamName: string, type: T, data: EventOfType<T>['data']): RecordedEvent<EventOfType<T>>;
export function recorded(streamName: string, type: string, data: unknown): RecordedEvent {
  return {
    id: `e${++position}`,
    streamName,
    revision: 0,
    position: String(position).padStart(20, '0'),
    type,
    data,
    metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
    recordedAt: '2026-01-01T00:00:00.000Z',
  };
}

/**
 * Folds events the way the runner does, over an in-memory map: by-key targets start from
 * null, selections match existing documents on equal fields.
 */
export function project(definition: ProjectionDefinition, events: RecordedEvent[]): Map<string, Document> {
  const docs = new Map<string, Document>();
  const key = (r: DocumentRef) => `${r.collection}|${r.id}`;
  for (const event of events) {
    for (const target of definition.targets(event)) {
      const refs: DocumentRef[] = isRef(target)
        ? [target]
        : [...docs.entries()]
            .filter(
              ([k, d]) =>
                k.startsWith(`${target.collection}|`) && Object.entries(target.where).every(([f, v]) => d[f] === v),
            )
            .map(([, d]) => ({ collection: target.collection, id: d._id }));
      for (const ref of refs) {
        const next = definition.evolve(docs.get(key(ref)) ?? null, event, ref);
        if (next) docs.set(key(ref), { ...next, _id: ref.id });
        else docs.delete(key(ref));
      }
    }
  }
  return docs;
}
