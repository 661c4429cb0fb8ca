import type { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import type { EventStore } from '../../../shared/ports/event-store.port';
import { WEBHOOK_SOURCE_EVENT_TYPES } from '../domain/chatkit-webhook-events';

/** Events read per page where the store cannot search by time and the log is scanned. */
const TIME_SCAN_PAGE = 1_000;

/**
 * Where a replay from `time` (ISO 8601) starts: a position after which every event recorded at
 * or after `time` lies, and none of the webhook-carrying events recorded before it (null: the
 * start of the log). The store's search by time when it has one (SQLite: a binary search over
 * positions); otherwise a scan of the webhook-carrying events from the start of the log.
 */
export async function replayStartAt(events: EventStore, time: string): Promise<LogPosition | null> {
  const searched = await events.positionBeforeTime?.(time);
  if (searched) return searched.before;
  let before: LogPosition | null = null;
  for (;;) {
    const page: RecordedEvent[] = await events.readAll({ after: before, maxCount: TIME_SCAN_PAGE, filter: { eventTypes: WEBHOOK_SOURCE_EVENT_TYPES } });
    for (const event of page) {
      if (event.recordedAt >= time) return before;
      before = event.position;
    }
    if (page.length < TIME_SCAN_PAGE) return before;
  }
}
