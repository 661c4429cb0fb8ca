import { LogPosition, RecordedEvent } from '../../../domain/event';
import { EventStore, LogSubscription } from '../../../ports/event-store.port';

/** What a follower does with what it reads, and when it stops. */
export interface FollowHandlers {
  /** Events read per catch-up page, asked before each page. */
  pageSize(): number;
  /** Whether to stop: asked before each page and as the live subscription opens. */
  interrupted(): boolean;
  /** Folds and writes one batch. */
  apply(batch: readonly RecordedEvent[]): Promise<void>;
  /** After each catch-up page is written. */
  afterPage(): Promise<void>;
  /** The catch-up reached the end of the log: before following it live. */
  caughtUp(): Promise<void>;
  /** After each live batch is written, and whenever the live events buffered are all written. */
  afterLive(): void;
}

/**
 * Reads the log for a projector: catches up by whole pages (a rebuild reads nothing event by
 * event), then follows it live, writing every event already buffered as one batch (at most
 * `maxBatch`), until the subscription ends (`close`) or fails (`fail`).
 */
export class LogFollower {
  private subscription: LogSubscription | null = null;
  private failure: unknown = null;
  /** Ends the gathering of the live batch now, when one gathers. */
  private endGathering: (() => void) | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly maxBatch: number,
    /**
     * Live, how long a batch gathers events after its first before it is written (0: only those
     * already buffered). A projection folded in the background writes fewer, larger batches so.
     */
    private readonly gatherMs = 0,
    /** Live events that end the gathering: their batch is written as soon as what is buffered is taken (a delete's). */
    private readonly writesAtOnce: (event: RecordedEvent) => boolean = () => false,
    /** The live subscription once caught up (another runner's events shared: SharedLiveEvents). */
    private readonly subscribeLive: (after: LogPosition | null) => LogSubscription = (after) => events.subscribeToAll({ after }),
  ) {}

  /** Follows the log after `from` until interrupted, closed or failed (then it rejects with the failure). */
  async follow(from: LogPosition | null, handlers: FollowHandlers): Promise<void> {
    this.failure = null;
    for (;;) {
      if (handlers.interrupted()) return;
      if (this.failure) throw this.failure;
      const page = await this.events.readAll({ after: from, maxCount: handlers.pageSize() });
      if (page.length === 0) break;
      await handlers.apply(page);
      from = page[page.length - 1].position;
      await handlers.afterPage();
      // The stores may answer synchronously (SQLite): without a turn of the event loop between
      // pages, a long catch-up would starve every timer and request of the process (the leases
      // do not wait for it: the fold renews them itself, ProjectionLeases.keepWhileFolding).
      await new Promise((resolve) => setImmediate(resolve));
    }
    await handlers.caughtUp();
    const subscription = this.subscribeLive(from);
    this.subscription = subscription;
    if (handlers.interrupted()) await subscription.close();
    const iterator = subscription[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<RecordedEvent>> | null = null;
    let batch: RecordedEvent[] = [];
    const IDLE = Symbol('idle');
    /** When the batch gathering now is written at the latest (with `gatherMs`). */
    let gathered: Promise<typeof IDLE> | null = null;
    let gatherTimer: NodeJS.Timeout | null = null;
    /** The batch holds an event that ends the gathering. */
    let urgent = false;
    const endOfTurn = (): Promise<typeof IDLE> => {
      if (this.gatherMs === 0 || urgent) return new Promise((r) => setImmediate(() => r(IDLE)));
      gathered ??= new Promise((r) => {
        this.endGathering = () => r(IDLE);
        gatherTimer = setTimeout(() => r(IDLE), this.gatherMs);
      });
      return gathered;
    };
    const batchWritten = () => {
      urgent = false;
      this.endGathering = null;
      if (gatherTimer) clearTimeout(gatherTimer);
      gatherTimer = null;
      gathered = null;
    };
    try {
      for (;;) {
        pending ??= iterator.next();
        // Take every event that is already buffered, then write them as one batch.
        const next =
          batch.length === 0
            ? await pending
            : await Promise.race([pending, endOfTurn()]);
        if (next === IDLE || (next as IteratorResult<RecordedEvent>).done) {
          batchWritten();
          if (batch.length && !this.failure) await handlers.apply(batch);
          batch = [];
          handlers.afterLive();
          if (next !== IDLE) break;
          continue;
        }
        pending = null;
        const event = (next as IteratorResult<RecordedEvent>).value;
        batch.push(event);
        if (this.gatherMs > 0 && !urgent && this.writesAtOnce(event)) urgent = true;
        if (batch.length >= this.maxBatch) {
          batchWritten();
          await handlers.apply(batch);
          batch = [];
          handlers.afterLive();
        }
      }
    } finally {
      batchWritten();
      await subscription.close().catch(() => undefined);
    }
    if (this.failure) throw this.failure;
  }

  /** Someone waits for the events gathering now (a search for its index): the batch is written without waiting out its time. */
  hurry(): void {
    this.endGathering?.();
  }

  /** Ends the live subscription: `follow` writes what it buffered and resolves. */
  async close(): Promise<void> {
    await this.subscription?.close();
  }

  /** Ends the subscription with an error: `follow` rejects with it. */
  fail(error: unknown): void {
    this.failure = error;
    void this.subscription?.close();
  }
}
