import { AppendTooLargeError, EventStore, appendSize } from '../../src/shared/ports/event-store.port';

/**
 * A real event store with some of its members replaced (to count calls, or to show a behaviour
 * of a store that cannot run here), everything else its own.
 */
export function withOverrides(store: EventStore, overrides: Partial<EventStore>): EventStore {
  return new Proxy(store, {
    get: (target, name) => {
      if (Object.prototype.hasOwnProperty.call(overrides, name)) return overrides[name as keyof EventStore];
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * A real store that refuses appends over `maxBytes` as EventStoreDB refuses those over its
 * MaxAppendSize (counted the same way, nothing written), declaring `declared` as its limit
 * (by default the true one; less or more to show a store whose limit is not what it says).
 */
export function refusingAppendsOver(store: EventStore, maxBytes: number, declared: number | undefined = maxBytes): EventStore & { readonly refused: number } {
  const counts = { refused: 0 };
  const limited = withOverrides(store, {
    maxAppendBytes: declared,
    append: async (streamName, events, expected) => {
      const bytes = appendSize(events);
      if (bytes > maxBytes) {
        counts.refused++;
        throw new AppendTooLargeError(streamName, maxBytes, bytes);
      }
      return store.append(streamName, events, expected);
    },
  });
  // How many appends it refused, read live.
  return new Proxy(limited, { get: (target, name) => (name === 'refused' ? counts.refused : Reflect.get(target, name)) }) as EventStore & { readonly refused: number };
}
