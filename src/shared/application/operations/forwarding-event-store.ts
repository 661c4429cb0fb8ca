import { LogPosition, RecordedEvent } from '../../domain/event';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SpaceLeft,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
} from '../../ports/event-store.port';

/**
 * What a decorator of the event store does not change, handed to the store it wraps: a
 * decorator (ObservedEventStore, SealingEventStore) overrides only what it adds to.
 */
export abstract class ForwardingEventStore implements EventStore {
  protected constructor(protected readonly inner: EventStore) {}

  get maxAppendBytes(): number | undefined {
    return this.inner.maxAppendBytes;
  }

  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    return this.inner.append(streamName, events, expected);
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamName, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  headPosition(): Promise<LogPosition | null> {
    return this.inner.headPosition();
  }

  subscribeToAll(options?: SubscribeToAllOptions): LogSubscription {
    return this.inner.subscribeToAll(options);
  }

  subscribeToStream(streamName: string, options?: SubscribeToStreamOptions): LogSubscription {
    return this.inner.subscribeToStream(streamName, options);
  }

  /** True where the inner store cannot tell. */
  recognizes(position: LogPosition): boolean {
    return this.inner.recognizes?.(position) ?? true;
  }

  /** Null where the inner store cannot search by time. */
  positionBeforeTime(time: string): Promise<{ readonly before: LogPosition | null } | null> {
    return this.inner.positionBeforeTime?.(time) ?? Promise.resolve(null);
  }

  /** Undefined where the inner store cannot tell (callers then assume others may have appended). */
  appendedElsewhere(): boolean {
    return this.inner.appendedElsewhere?.() ?? true;
  }

  /** Undefined where the inner store cannot tell. */
  streamVersion(streamName: string): string | undefined {
    return this.inner.streamVersion?.(streamName);
  }

  /** Null where the inner store cannot tell. */
  spaceLeft(): Promise<SpaceLeft | null> {
    return this.inner.spaceLeft?.() ?? Promise.resolve(null);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
