import { LogPosition, positionAfter, RecordedEvent } from '../../domain/event';
import { ReadStreamOptions } from '../../ports/event-store.port';

/** A read of one stream (the event store's, or the command pipeline's). */
export type StreamReader = (stream: string, options: ReadStreamOptions) => Promise<RecordedEvent[]>;

/**
 * A stream's events newest first, read backwards `pageSize` at a time, so a caller that stops at
 * the event it looks for reads no further back than needed.
 */
export async function* newestFirst(read: StreamReader, stream: string, pageSize: number): AsyncGenerator<RecordedEvent> {
  for (let from: number | undefined; ; ) {
    const page = await read(stream, { direction: 'backwards', fromRevision: from, maxCount: pageSize });
    yield* page;
    if (page.length < pageSize || page[page.length - 1].revision === 0) return;
    from = page[page.length - 1].revision - 1;
  }
}

/** Events read per step past events the search skips. */
const SCAN_PAGE = 16;

/**
 * The first event of a stream, at revisions 0 to `newest`, that `reached` accepts, found by a
 * binary search over revisions with single-event reads: about log2(length) reads (20 for a
 * million events), however long the stream grew. `reached` must be monotone over the events it
 * does not skip (false, then true); it returns null for an event the search steps over.
 */
export async function firstEventReaching(
  read: StreamReader,
  stream: string,
  newest: number,
  reached: (event: RecordedEvent) => boolean | null,
): Promise<RecordedEvent | null> {
  let found: RecordedEvent | null = null;
  for (let low = 0, high = newest; low <= high; ) {
    const middle = Math.floor((low + high) / 2);
    const event = await firstComparable(read, stream, middle, high, reached);
    if (event === null) {
      high = middle - 1; // nothing from `middle` to `high` can be compared
    } else if (reached(event)) {
      found = event; // nothing compared between `middle` and `event`: the answer is it or earlier
      high = middle - 1;
    } else {
      low = event.revision + 1;
    }
  }
  return found;
}

/** The first event of the stream whose log position is after `after` (positions grow with revisions), or null. */
export async function firstEventAfterPosition(read: StreamReader, stream: string, after: LogPosition): Promise<RecordedEvent | null> {
  const [newest] = await read(stream, { direction: 'backwards', maxCount: 1 });
  if (!newest || !positionAfter(newest.position, after)) return null;
  return firstEventReaching(read, stream, newest.revision, (event) => positionAfter(event.position, after));
}

/** The first event at a revision from `from` to `to` that `reached` does not skip. */
async function firstComparable(
  read: StreamReader,
  stream: string,
  from: number,
  to: number,
  reached: (event: RecordedEvent) => boolean | null,
): Promise<RecordedEvent | null> {
  for (let at = from, count = 1; at <= to; count = SCAN_PAGE) {
    const page = await read(stream, { fromRevision: at, maxCount: count });
    for (const event of page) {
      if (event.revision > to) return null;
      if (reached(event) !== null) return event;
    }
    if (page.length < count) return null;
    at = page[page.length - 1].revision + 1;
  }
  return null;
}
