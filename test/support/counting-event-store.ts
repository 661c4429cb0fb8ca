import { EventStore, ReadStreamOptions } from '../../src/shared/ports/event-store.port';
import { withOverrides } from './event-store-overrides';

/** A real event store, counting the stream reads made through it (to show a cost is bounded, not to mock). */
export class CountingStore {
  reads = 0;
  eventsRead = 0;
  readonly events: EventStore;
  constructor(store: EventStore) {
    this.events = withOverrides(store, {
      readStream: async (stream: string, options?: ReadStreamOptions) => {
        const events = await store.readStream(stream, options);
        this.reads++;
        this.eventsRead += events.length;
        return events;
      },
    });
  }
  reset() {
    this.reads = 0;
    this.eventsRead = 0;
  }
}
