import type { RecordedEvent } from '../src/shared/domain/event';
import type { EventOfType, ParleyEvent } from './events';

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

