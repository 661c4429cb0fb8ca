import { LogPosition, RecordedEvent } from '../../../domain/event';
import { EventStore } from '../../../ports/event-store.port';
import { belongsTo } from './transfer-format';

/** Events read from the log at a time. */
export const EXPORT_PAGE_SIZE = 500;

export interface InstanceEventPage {
  /** The instance's events of the page, in log order. */
  readonly events: readonly RecordedEvent[];
  /** The position of the page's last event, the instance's or not: where the next page starts. */
  readonly lastPosition: LogPosition;
}

/**
 * The log after `after` up to its head (as each page is read), page by page, with one
 * instance's events of each page: what an export copies (`npm run export` and the operator
 * API's download alike). A caller may stop between pages.
 */
export async function* instanceEventPages(log: EventStore, instanceId: string, after: LogPosition | null): AsyncGenerator<InstanceEventPage> {
  const belongs = belongsTo(instanceId);
  let position = after;
  for (;;) {
    const page = await log.readAll({ after: position, maxCount: EXPORT_PAGE_SIZE });
    if (page.length === 0) return;
    position = page[page.length - 1]!.position;
    yield { events: page.filter((event) => belongs(event.streamName)), lastPosition: position };
  }
}
