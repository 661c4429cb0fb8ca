import type { LogPosition } from '../../../shared/domain/event';
import type { LeaseFence, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { DELIVERY_LOG_ENTRIES, WEBHOOK_DELIVERIES, WebhookDeliveryDocument } from './webhook-deliveries';

/** Delivered events whose checkpoint and log entries are written together at most (a busy webhook). */
const MAX_PENDING = 100;
/** How long delivered events wait for their checkpoint at most (a quiet webhook). */
const MAX_DELAY_MS = 200;

/**
 * Moves a webhook's checkpoint, with its delivery log entries, in one batch fenced by its lease,
 * for a group of events at a time rather than one durable write per event: a webhook then keeps
 * up with a busy instance. Only events the receiver answered 2xx are ever passed here, so a crash
 * before a write delivers those events again, with the same ids (at least once, as before).
 */
export class CheckpointWriter {
  private position: LogPosition | null = null;
  private pending: WebhookDeliveryDocument[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  /** Why a write failed (the lease lost, the store unavailable): the deliveries stop and are resumed from the last written checkpoint. */
  failed: Error | null = null;

  /** Entries written since the log was last pruned. */
  private sincePruned = 0;

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly checkpoint: string,
    private readonly fence: LeaseFence,
    private readonly onFailure: (error: unknown) => void,
    /** Keeps the delivery log bounded: run after every DELIVERY_LOG_ENTRIES / 2 entries written. */
    private readonly prune: () => Promise<void> = async () => undefined,
  ) {}

  /** The events up to `position` are done with (delivered, or carried nothing for the webhook). */
  passed(position: LogPosition, delivered: readonly WebhookDeliveryDocument[]): void {
    this.position = position;
    this.pending.push(...delivered);
    if (this.pending.length >= MAX_PENDING) void this.flush().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), MAX_DELAY_MS);
  }

  /** Writes entries of the delivery log without moving the checkpoint (a delivery given up on), after what is pending. */
  async logOnly(entries: readonly WebhookDeliveryDocument[]): Promise<void> {
    await this.flush();
    await this.write(entries, {});
  }

  /** Writes what is pending now; resolves once it (and every earlier write) is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const position = this.position;
    const entries = this.pending;
    this.position = null;
    this.pending = [];
    if (position === null) return this.writing;
    return this.write(entries, { [this.checkpoint]: position });
  }

  private write(entries: readonly WebhookDeliveryDocument[], checkpoints: Record<string, LogPosition>): Promise<void> {
    const changes = entries.map((document) => ({ collection: WEBHOOK_DELIVERIES, kind: 'put' as const, document, position: document.position }));
    this.writing = this.writing.then(async () => {
      if (this.failed) throw this.failed;
      try {
        await this.readModels.applyBatch(changes, checkpoints, [this.fence]);
        this.sincePruned += changes.length;
        if (this.sincePruned >= DELIVERY_LOG_ENTRIES / 2) {
          this.sincePruned = 0;
          await this.prune().catch(() => undefined); // the next prune tries again; deliveries go on
        }
      } catch (error) {
        this.failed = error instanceof Error ? error : new Error(String(error));
        this.onFailure(error);
        throw error;
      }
    });
    return this.writing;
  }
}
