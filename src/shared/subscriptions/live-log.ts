import { LogPosition, RecordedEvent } from '../domain/event';
import { EventStore, LogSubscription } from '../ports/event-store.port';

export type LiveListener = (event: RecordedEvent) => void;
/** Extra routing keys an event is delivered under besides its stream name (e.g. the users it concerns). */
export type EventRouter = (event: RecordedEvent) => readonly string[];

/**
 * The one log subscription of a process that feeds every open client subscription: it
 * follows the log from where it was at start and hands each event to the listeners of its
 * stream and of the keys the routers derive, so a thousand subscribers cost one reader.
 */
export class LiveLog {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly routers: EventRouter[] = [];
  private subscription: LogSubscription | null = null;
  private loop: Promise<void> | null = null;
  private current: LogPosition | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    this.current = await this.events.headPosition();
    const subscription = this.events.subscribeToAll({ after: this.current });
    this.subscription = subscription;
    this.loop = (async () => {
      for await (const event of subscription) {
        this.current = event.position;
        this.dispatch(event.streamName, event);
        for (const router of this.routers) for (const key of router(event)) this.dispatch(key, event);
      }
    })().catch(this.onError);
  }

  /** The newest position handed to listeners: everything up to it was dispatched. */
  get position(): LogPosition | null {
    return this.current;
  }

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
      if (set!.size === 0) this.listeners.delete(key);
    };
  }

  private dispatch(key: string, event: RecordedEvent): void {
    const set = this.listeners.get(key);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.loop;
  }
}
