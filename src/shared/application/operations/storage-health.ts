import { AppendResult, AppendTooLargeError, EventStore, EventToAppend, ExpectedRevision, WrongExpectedRevisionError } from '../../ports/event-store.port';
import { ForwardingEventStore } from './forwarding-event-store';
import { DomainError, messageOf } from '../../domain/errors';

/**
 * How long an append's storage failure keeps storage reported failing, whatever succeeds
 * meanwhile: on a nearly full disk small writes (a cursor, the readiness probe) still fit
 * while others (a page split under a busy stream) keep failing.
 */
export const STORAGE_FAILURE_HOLD_MS = 5_000;

/** Whether the log accepts appends, as the appends found out. */
export class StorageHealth {
  private failure: { error: string; since: number; last: number } | null = null;

  constructor(private readonly holdMs = STORAGE_FAILURE_HOLD_MS) {}

  /**
   * The failure since which no append succeeded, or one seen within STORAGE_FAILURE_HOLD_MS;
   * `recent` says it is the latter, which a successful probe does not clear.
   */
  get failing(): { readonly error: string; readonly since: number; readonly recent: boolean } | null {
    if (!this.failure) return null;
    const { error, since, last } = this.failure;
    return { error, since, recent: Date.now() - last < this.holdMs };
  }

  recordFailure(error: unknown): void {
    const now = Date.now();
    this.failure = { error: messageOf(error), since: this.failure?.since ?? now, last: now };
  }

  recordSuccess(): void {
    if (this.failure && Date.now() - this.failure.last >= this.holdMs) this.failure = null;
  }
}

/**
 * The event store as the rest of the process sees it, with every append's outcome reported
 * to StorageHealth (a conflict on the expected revision, a deleted stream or an append too
 * large are the store working and refusing one write, not failing).
 */
export class ObservedEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    private readonly health: StorageHealth,
  ) {
    super(inner);
  }

  override async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.inner.append(streamName, events, expected);
      this.health.recordSuccess();
      return result;
    } catch (error) {
      const refused = error instanceof WrongExpectedRevisionError || error instanceof AppendTooLargeError || error instanceof DomainError;
      if (!refused) this.health.recordFailure(error);
      throw error;
    }
  }
}
