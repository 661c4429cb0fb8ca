import { RecordedEvent } from '../../../shared/domain/event';
import { LogSubscription } from '../../../shared/ports/event-store.port';
import { PollingFeed } from '../../shared/closeable-feed';
import { seqOf } from './positions';

/** Rings every idle subscription of this process when commits become visible. */
export class AppendDoorbell {
  private readonly listeners = new Set<() => void>();

  ring(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Calls `listener` at the next ring; returns how to stop. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * A subscription fed by pages of a read, woken by the doorbell for this process's commits and
 * every `pollMs` for other processes' (the admin CLI, API processes beside a projector worker).
 */
export interface FeedSource {
  readonly doorbell: AppendDoorbell;
  readonly pollMs: number;
  readonly pageSize: number;
}

/** The whole log after position `after` (a page is `readAll(afterSeq, pageSize)`). */
export function feedOfAll(source: FeedSource, after: number, readAll: (afterSeq: number, limit: number) => RecordedEvent[]): LogSubscription {
  return new PollingFeed(
    (last) => readAll(last ? seqOf(last.position) : after, source.pageSize),
    (signal) => source.doorbell.listen(signal.ring),
    source.pollMs,
  );
}

/** One stream after revision `afterRevision` (a page is `readStream(fromRevision, pageSize)`). */
export function feedOfStream(
  source: FeedSource,
  afterRevision: number,
  readStream: (fromRevision: number, maxCount: number) => RecordedEvent[],
): LogSubscription {
  return new PollingFeed(
    (last) => readStream((last ? last.revision : afterRevision) + 1, source.pageSize),
    (signal) => source.doorbell.listen(signal.ring),
    source.pollMs,
  );
}
