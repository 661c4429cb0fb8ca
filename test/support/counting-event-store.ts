import { EventStore, LogSubscription, ReadAllOptions, ReadStreamOptions, SubscribeToAllOptions } from '../../src/shared/ports/event-store.port';
import { withOverrides } from './event-store-overrides';

/** A real event store, counting the reads made through it (to show a cost is bounded, not to mock). */
export class CountingStore {
  /** Stream reads (`readStream` calls) and the events they returned. */
  reads = 0;
  eventsRead = 0;
  /** Whole-log reads (`readAll` calls) and the events they returned. */
  logReads = 0;
  logEventsRead = 0;
  /** Subscriptions of the whole log (`subscribeToAll` calls) and the events they delivered. */
  subscriptions = 0;
  subscribedEventsRead = 0;
  readonly events: EventStore;
  constructor(store: EventStore) {
    this.events = withOverrides(store, {
      readStream: async (stream: string, options?: ReadStreamOptions) => {
        const events = await store.readStream(stream, options);
        this.reads++;
        this.eventsRead += events.length;
        return events;
      },
      readAll: async (options?: ReadAllOptions) => {
        const events = await store.readAll(options);
        this.logReads++;
        this.logEventsRead += events.length;
        return events;
      },
      subscribeToAll: (options?: SubscribeToAllOptions): LogSubscription => {
        const subscription = store.subscribeToAll(options);
        this.subscriptions++;
        const counting = this;
        return {
          async *[Symbol.asyncIterator]() {
            for await (const event of subscription) {
              counting.subscribedEventsRead++;
              yield event;
            }
          },
          close: () => subscription.close(),
        };
      },
    });
  }
  reset() {
    this.reads = 0;
    this.eventsRead = 0;
    this.logReads = 0;
    this.logEventsRead = 0;
    this.subscriptions = 0;
    this.subscribedEventsRead = 0;
  }

  /** Events read from the log by any means: pages and subscriptions. */
  get everyEventRead(): number {
    return this.logEventsRead + this.subscribedEventsRead;
  }
}
