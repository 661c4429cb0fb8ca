import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WrongExpectedRevisionError,
} from '../ports/event-store.port';
import { RecordedEvent } from '../domain/event';
import { messageOf } from '../domain/errors';

/** Whether the log accepts appends, as the last append found out. */
export class StorageHealth {
  private failure: { error: string; since: number } | null = null;

  get failing(): { readonly error: string; readonly since: number } | null {
    return this.failure;
  }

  recordFailure(error: unknown): void {
    this.failure ??= { error: messageOf(error), since: Date.now() };
  }

  recordSuccess(): void {
    this.failure = null;
  }
}

/**
 * The event store as the rest of the process sees it, with every append's outcome reported
 * to StorageHealth (a conflict on the expected revision is the store working, not failing).
 */
export class ObservedEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly health: StorageHealth,
  ) {}

  async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.inner.append(streamName, events, expected);
      this.health.recordSuccess();
      return result;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) this.health.recordFailure(error);
      throw error;
    }
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamName, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  headPosition() {
    return this.inner.headPosition();
  }

  subscribeToAll(options?: SubscribeToAllOptions): LogSubscription {
    return this.inner.subscribeToAll(options);
  }

  subscribeToStream(streamName: string, options?: SubscribeToStreamOptions): LogSubscription {
    return this.inner.subscribeToStream(streamName, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
