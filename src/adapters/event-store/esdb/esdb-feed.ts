import type { ReadableSubscription } from '@eventstore/db-client';
import { RecordedEvent } from '../../../shared/domain/event';
import { LogSubscription } from '../../../shared/ports/event-store.port';
import { EsdbTimeoutError } from '../../shared/esdb-client';

/**
 * The server ended a subscription that nobody closed (a restart, a leader change, a deleted
 * stream): thrown out of the `for await`, so that the consumer resubscribes from its checkpoint
 * instead of taking the end for the end of the log.
 */
export class EsdbSubscriptionEndedError extends Error {
  constructor(what: string) {
    super(`EventStoreDB ended ${what}`);
    this.name = 'EsdbSubscriptionEndedError';
  }
}

const CLOSED = Symbol('closed');

/**
 * A client subscription consumed with `for await`, one event at a time: EventStoreDB's own
 * catch-up subscription already switches from stored to live events without a gap.
 * `close()` ends a pending iteration at once, whatever the stream does after cancellation.
 * Any other end throws: an error of the stream (a dropped connection, a deleted stream), no
 * confirmation within the timeout, or the server ending it (EsdbSubscriptionEndedError).
 */
export class EsdbFeed<R> implements LogSubscription {
  private closed = false;
  private active: ReadableSubscription<R> | null = null;
  /** Ends the pending wait for the next event (see nextOf). */
  private wake: (() => void) | null = null;

  constructor(
    private readonly open: () => ReadableSubscription<R>,
    private readonly acceptor: () => (item: R) => RecordedEvent | null,
    private readonly timeoutMs: number,
    private readonly what: string,
    private readonly onClose: (feed: LogSubscription) => void,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.closed) return;
    const subscription = this.open();
    this.active = subscription;
    // The server confirms a subscription first; silence means a hung connection.
    const watchdog = setTimeout(
      () => subscription.destroy(new EsdbTimeoutError(`${this.what} (no confirmation)`, this.timeoutMs)),
      this.timeoutMs,
    );
    watchdog.unref();
    subscription.once('confirmation', () => clearTimeout(watchdog));
    const accept = this.acceptor();
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await this.nextOf(iterator);
        if (next === CLOSED || this.closed) return;
        if (next.done) throw new EsdbSubscriptionEndedError(this.what);
        const event = accept(next.value);
        if (event) yield event;
        if (this.closed) return;
      }
    } catch (error) {
      if (this.closed) return; // cancelling surfaces as a stream error
      throw error;
    } finally {
      clearTimeout(watchdog);
      await this.close();
    }
  }

  /**
   * The subscription's next item, or CLOSED as soon as close() is called. A fresh promise each
   * time, never a race against one promise that lives as long as the feed: every such race stays
   * attached to it with its result until it settles, so a live subscription would keep every
   * event it ever delivered.
   */
  private nextOf(iterator: AsyncIterator<R>): Promise<IteratorResult<R> | typeof CLOSED> {
    return new Promise<IteratorResult<R> | typeof CLOSED>((resolve, reject) => {
      this.wake = () => resolve(CLOSED);
      iterator.next().then(resolve, reject);
    }).finally(() => {
      this.wake = null;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.onClose(this);
    const subscription = this.active;
    if (subscription) {
      // The client re-emits the call's late errors (a connection that fails after cancelling)
      // on the subscription itself; unheard, an 'error' event would crash the process.
      subscription.on('error', () => undefined);
      // Not awaited: on a hung connection unsubscribe() never settles.
      subscription.unsubscribe().catch(() => undefined);
      subscription.destroy();
    }
  }
}
