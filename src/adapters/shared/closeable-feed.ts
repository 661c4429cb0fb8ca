import { RecordedEvent } from '../../shared/domain/event';
import { LogSubscription } from '../../shared/ports/event-store.port';

/**
 * Turns a "fetch the next page after X" function and a doorbell into a catch-up-then-live
 * subscription. Reading always resumes from the last delivered event, so the switch from
 * stored to live events can neither skip nor repeat one.
 */
export class PollingFeed implements LogSubscription {
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly fetchAfter: (cursor: RecordedEvent | null) => RecordedEvent[] | Promise<RecordedEvent[]>,
    private readonly waitForChange: (signal: { ring(): void }) => () => void,
    private readonly pollMs: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    let last: RecordedEvent | null = null;
    while (!this.closed) {
      const page = await this.fetchAfter(last);
      if (page.length > 0) {
        for (const event of page) {
          if (this.closed) return;
          yield event;
          last = event;
        }
        continue;
      }
      await new Promise<void>((resolve) => {
        const ring = () => {
          clearTimeout(timer);
          unsubscribe();
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(ring, this.pollMs);
        const unsubscribe = this.waitForChange({ ring });
        this.wake = ring;
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
  }
}
