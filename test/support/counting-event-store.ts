import { EventStore, ReadAllOptions, ReadStreamOptions } from '../../src/shared/ports/event-store.port';
import { withOverrides } from './event-store-overrides';

/** A real event store, counting the reads made through it (to show a cost is bounded, not to mock). */
export class CountingStore {
  /** Stream reads (`readStream` calls) and the events they returned. */
  reads = 0;
  eventsRead = 0;
  /** Whole-log reads (`readAll` calls) and the events they returned. */
  logReads = 0;
  logEventsRead = 0;
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
    });
  }
  reset() {
    this.reads = 0;
    this.eventsRead = 0;
    this.logReads = 0;
    this.logEventsRead = 0;
  }
}
