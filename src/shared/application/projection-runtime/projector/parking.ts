import { LogPosition, RecordedEvent } from '../../../domain/event';
import { messageOf } from '../../../domain/errors';
import { ReadModelStore } from '../../../ports/read-model-store.port';
import { ProjectionEventError } from './projection-event-error';
import { ProjectionSlot } from './projection-slot';

/** Where parked projections are recorded, so every process (and /health) sees them. */
export const PROJECTOR_STATUS = 'projector_status';

export interface ParkingOptions {
  /** Who parks, written in the note. */
  readonly owner: string;
  /** How many times the same event may fail a projection before it is parked. */
  readonly maxEventAttempts: number;
  /** The wait before the n-th attempt: initial × 2^(n-2), capped. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  /** Every failure, and whether it parked the projection. */
  readonly onError?: (error: unknown, context: { readonly projection: string; readonly parked?: boolean }) => void;
  /** A projection was parked: writes waiting for it learn that it will not get there. */
  readonly onParked: () => void;
  /** Projections waiting to retry are due: the fold restarts from where they stand. */
  readonly onRetryDue: () => void;
}

export interface ParkedProjection {
  readonly error: string;
  readonly event: RecordedEvent;
}

export interface RetryingProjection extends ParkedProjection {
  /** The attempts made at the event so far. */
  readonly attempts: number;
  /** When it tries again (ms since the epoch). */
  readonly at: number;
}

/**
 * Projections that an event fails (its `targets` or `evolve` throws). Such a projection stops
 * there alone, while the others fold on, and tries the event again after a backoff (it is
 * `retrying`); after `maxEventAttempts` failures on the same event it is parked, and a note in
 * `projector_status` tells every process. A poison event thus stops only its own projection.
 */
export class ProjectionParking {
  private readonly parked = new Map<string, ParkedProjection>();
  private readonly retrying = new Map<string, RetryingProjection>();
  /** Failures so far by `<checkpoint>@<position>`. */
  private readonly failures = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly store: ReadModelStore,
    private readonly options: ParkingOptions,
  ) {}

  /** One projection failed on an event: it waits to retry it, or is parked after its attempts. */
  failed(error: ProjectionEventError): void {
    const { projection, event } = error;
    const key = `${projection}@${event.position}`;
    const attempts = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, attempts);
    this.retrying.delete(projection);
    if (attempts >= this.options.maxEventAttempts) {
      this.parked.set(projection, { error: messageOf(error), event });
      this.options.onError?.(error, { projection, parked: true });
      void this.recordParked(projection).catch(() => undefined);
      this.options.onParked();
      return;
    }
    this.options.onError?.(error, { projection });
    const { initialMs, maxMs } = this.options.backoff;
    this.retrying.set(projection, { error: messageOf(error), event, attempts, at: Date.now() + Math.min(maxMs, initialMs * 2 ** (attempts - 1)) });
    this.scheduleRetry();
  }

  /** Whether a projection folds now (not parked, not waiting for a retry). */
  folds(checkpoint: string): boolean {
    return !this.parked.has(checkpoint) && !this.retrying.has(checkpoint);
  }

  parkedOne(checkpoint: string): ParkedProjection | undefined {
    return this.parked.get(checkpoint);
  }

  retryingOne(checkpoint: string): RetryingProjection | undefined {
    return this.retrying.get(checkpoint);
  }

  isParked(checkpoint: string): boolean {
    return this.parked.has(checkpoint);
  }

  /** A projection no longer held here stops waiting for its retry (whoever holds it now folds it). */
  letGo(checkpoint: string): void {
    this.retrying.delete(checkpoint);
  }

  /** A projection that folded past the event it once failed on is no longer in trouble there. */
  forgetPassed(slots: readonly ProjectionSlot[]): void {
    for (const k of this.failures.keys()) {
      const [checkpoint, position] = k.split('@');
      const slot = slots.find((s) => s.checkpoint === checkpoint);
      if (slot && slot.position && slot.position >= position) this.failures.delete(k);
    }
  }

  /** A projection taken on gets another chance: the "parked" notes of those held, but not parked here, go. */
  async clearStaleNotes(held: readonly string[]): Promise<void> {
    const stale = (await this.store.find(PROJECTOR_STATUS, { where: { state: 'parked' } })).filter(
      (d) => held.includes(d._id) && !this.parked.has(d._id),
    );
    if (stale.length) await this.store.applyBatch(stale.map((d) => ({ collection: PROJECTOR_STATUS, kind: 'delete', id: d._id })), {});
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** Wakes the fold when the earliest retrying projection is due. */
  private scheduleRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.retrying.size === 0 || this.stopped) return;
    const at = Math.min(...[...this.retrying.values()].map((r) => r.at));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const now = Date.now();
      for (const [name, r] of this.retrying) if (r.at <= now) this.retrying.delete(name);
      this.scheduleRetry();
      // The fold restarts from where the due ones stand; the others skip what they folded.
      this.options.onRetryDue();
    }, Math.max(0, at - Date.now()));
  }

  /** Parked projections are written down so that API processes report them in /health. */
  private async recordParked(checkpoint: string): Promise<void> {
    const parked = this.parked.get(checkpoint)!;
    await this.store.applyBatch(
      [
        {
          collection: PROJECTOR_STATUS,
          kind: 'put',
          document: {
            _id: checkpoint,
            state: 'parked',
            error: parked.error,
            event_position: parked.event.position,
            event_type: parked.event.type,
            event_stream: parked.event.streamName,
            owner: this.options.owner,
            at: new Date().toISOString(),
          },
          position: parked.event.position,
        },
      ],
      {},
    );
  }
}
