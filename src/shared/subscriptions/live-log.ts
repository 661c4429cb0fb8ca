import { Backoff } from '../application/operations/backoff';
import { LogPosition, RecordedEvent } from '../domain/event';
import { EventStore, LogSubscription } from '../ports/event-store.port';
import { recordFanOutDelivery } from '../observability/metrics';
import { afterQueuedWrites } from './event-channel';
import { messageOf } from '../domain/errors';

export type LiveListener = (event: RecordedEvent) => void;
/** Extra routing keys an event is delivered under besides its stream name (e.g. the users it concerns). */
export type EventRouter = (event: RecordedEvent) => readonly string[];

export interface LiveLogOptions {
  /**
   * Opens an event of the log it follows (sealed personal fields), once a listener takes it:
   * most events of a busy server have none, and routers read only what is never sealed.
   */
  readonly open?: (event: RecordedEvent) => RecordedEvent | Promise<RecordedEvent>;
  /** A listener threw, or the subscription dropped (it resubscribes by itself). */
  readonly onError?: (error: unknown, context: { readonly dropped: boolean }) => void;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
}

/**
 * The one log subscription of a process that feeds every open client subscription: it
 * follows the log from where it was at start and hands each event to the listeners of its
 * stream and of the keys the routers derive, so a thousand subscribers cost one reader.
 *
 * When the subscription fails or the store ends it, the live log reports it, waits with
 * backoff and resubscribes after the last event it dispatched: listeners see neither a gap
 * nor a repeat.
 */
export class LiveLog {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly routers: EventRouter[] = [];
  private subscription: LogSubscription | null = null;
  private loop: Promise<void> | null = null;
  private current: LogPosition | null = null;
  private stopped = false;
  private droppedState: { error: string; since: number } | null = null;
  private wake: (() => void) | null = null;
  private readonly backoff: Backoff;

  constructor(
    private readonly events: EventStore,
    private readonly options: LiveLogOptions = {},
  ) {
    this.backoff = new Backoff(options.backoff?.initialMs ?? 100, options.backoff?.maxMs ?? 5_000);
  }

  /** Starts following the log from its head; resolves once the head is known. */
  async start(): Promise<void> {
    this.current = await this.events.headPosition();
    this.loop = this.follow();
  }

  /** The newest position handed to listeners: everything up to it was dispatched. */
  get position(): LogPosition | null {
    return this.current;
  }

  /** Why the live log is not following the log right now, or null while it is. */
  get dropped(): { readonly error: string; readonly since: number } | null {
    return this.droppedState;
  }

  /** A router sees the event as the log holds it: it routes by stream name, type and fields no personal-data rule seals. */
  addRouter(router: EventRouter): void {
    this.routers.push(router);
  }

  /** Listens to events of a stream name or a routing key; returns the removal. */
  on(key: string, listener: LiveListener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      // A removal called twice must not drop a newer set of the same key.
      if (set!.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      let subscription: LogSubscription | null = null;
      try {
        // After a drop, the store must answer again before the live log says it follows.
        if (this.droppedState) await this.events.headPosition();
        this.droppedState = null;
        subscription = this.events.subscribeToAll({ after: this.current });
        this.subscription = subscription;
        for await (const stored of subscription) {
          this.backoff.reset();
          const keys = [stored.streamName];
          for (const router of this.routers) keys.push(...router(stored));
          if (!keys.some((key) => this.listeners.has(key))) {
            this.current = stored.position;
            continue;
          }
          const opened = this.options.open?.(stored) ?? stored;
          const event = opened instanceof Promise ? await opened : opened;
          this.current = event.position;
          let delivered = false;
          for (const key of keys) delivered = this.dispatch(key, event) || delivered;
          if (delivered) this.measureDelivery(event);
        }
        if (this.stopped) return;
        throw new Error('the event store ended the live subscription');
      } catch (error) {
        if (this.stopped) return;
        this.droppedState = { error: messageOf(error), since: Date.now() };
        this.options.onError?.(error, { dropped: true });
        await subscription?.close().catch(() => undefined);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.backoff.next());
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
      }
    }
  }

  /**
   * Measures commit-to-socket time once per fan-out batch, not per delivery: the oldest event
   * dispatched since the last measure is observed when every frame queued so far is written.
   */
  private measureDelivery(event: RecordedEvent): void {
    if (this.oldestUnmeasured !== null) return;
    this.oldestUnmeasured = Date.parse(event.recordedAt);
    afterQueuedWrites(() => {
      recordFanOutDelivery((Date.now() - this.oldestUnmeasured!) / 1000);
      this.oldestUnmeasured = null;
    });
  }

  private oldestUnmeasured: number | null = null;

  /** Hands the event to the key's listeners; whether there were any. */
  private dispatch(key: string, event: RecordedEvent): boolean {
    const set = this.listeners.get(key);
    if (!set) return false;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (error) {
        this.options.onError?.(error, { dropped: false });
      }
    }
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.subscription?.close();
    await this.loop;
  }
}
