import type { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import type { EventStore } from '../../../shared/ports/event-store.port';

/** Events read per page of the log. */
const PAGE = 500;

/**
 * Tells of the log's events that destroy content (a delete whose keys go, an instance wipe)
 * appended since it last looked, so that content opened and kept in memory before is dropped
 * rather than served after its keys are gone. Each look reads only the matching events after
 * the head it reached last (the log's own type filter); concurrent looks share one read.
 */
export class DestroyedContentWatch {
  /** The head reached; undefined before the first look (nothing kept then predates it). */
  private seen: LogPosition | null | undefined;
  /** The looks, one at a time. */
  private tail: Promise<void> = Promise.resolve();
  /** The look queued and not started: a call made now is covered by it. */
  private queued: Promise<void> | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly types: readonly string[],
    private readonly destroyed: (event: RecordedEvent) => void,
  ) {}

  /** Resolves once every destroying event appended before the call was told. */
  catchUp(): Promise<void> {
    if (this.queued) return this.queued;
    const look: Promise<void> = this.tail.then(() => {
      if (this.queued === look) this.queued = null;
      return this.look();
    });
    this.queued = look;
    this.tail = look.catch(() => undefined);
    return look;
  }

  private async look(): Promise<void> {
    const head = await this.events.headPosition();
    if (this.seen === undefined) {
      this.seen = head;
      return;
    }
    let after = this.seen;
    for (;;) {
      const page = await this.events.readAll({ after, maxCount: PAGE, filter: { eventTypes: this.types } });
      for (const event of page) this.destroyed(event);
      if (page.length > 0) after = page[page.length - 1].position;
      if (page.length < PAGE) break;
    }
    this.seen = head !== null && (after === null || head > after) ? head : after;
  }
}
