import type { RecordedEvent } from '../src/shared/domain/event';

let position = 0;

/** A recorded event as a store would deliver it, for projection unit tests. */
export const recorded = (streamName: string, type: string, data: unknown): RecordedEvent => ({
  id: `e${++position}`,
  streamName,
  revision: 0,
  position: String(position).padStart(20, '0'),
  type,
  data,
  metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
  recordedAt: '2026-01-01T00:00:00.000Z',
});
