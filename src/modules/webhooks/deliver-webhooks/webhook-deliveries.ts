import type { LogPosition } from '../../../shared/domain/event';
import type { CollectionSpec, Document, ReadModelStore } from '../../../shared/ports/read-model-store.port';

/**
 * The delivery log: one document per event delivered to a webhook (or given up on), written in
 * the same batch as the webhook's checkpoint. No payload: ids, type, outcome and time only.
 * Not a projection (the worker writes it), so a rebuild of the read models leaves it as it is.
 */
export const WEBHOOK_DELIVERIES = 'webhook_deliveries';
export const WEBHOOK_DELIVERIES_COLLECTION: CollectionSpec = {
  name: WEBHOOK_DELIVERIES,
  // Ends with _id: the log paged newest first (delivered_at, then id) in index order.
  indexes: [{ fields: ['instance_id', 'webhook_id', 'delivered_at', '_id'] }],
};

export interface WebhookDeliveryDocument extends Document {
  readonly instance_id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly event_type: string;
  /** Where the log holds the event the delivery carried (what a redelivery replays from). */
  readonly position: LogPosition;
  /** The position the worker read the event after (with the same filter): where a redelivery finds it again. */
  readonly after_position: LogPosition | null;
  /** Set on the entry of a redelivery: the number of the request. */
  readonly redelivery?: number;
  readonly status: 'delivered' | 'failed';
  readonly attempts: number;
  readonly response_code: number | null;
  readonly error?: string;
  /** When the last attempt ended. */
  readonly delivered_at: string;
}

/** The checkpoint of a webhook's deliveries: one per replay, so a replay starts from its own position. */
export const webhookCheckpoint = (instanceId: string, webhookId: string, replay: number) => `webhook:${instanceId}/${webhookId}#${replay}`;
/** How many of a webhook's redelivery requests were sent (a count, as a checkpoint's fixed-width text). */
export const redeliveryCheckpoint = (instanceId: string, webhookId: string) => `webhook:${instanceId}/${webhookId}!redeliveries`;
export const redeliveryCount = (n: number): string => String(n).padStart(20, '0');
/** The lease one process holds while it delivers a webhook's events. */
export const webhookLease = (instanceId: string, webhookId: string) => `webhook:${instanceId}/${webhookId}`;

/** Entries the delivery log keeps per webhook: the newest ones. */
export const DELIVERY_LOG_ENTRIES = 1_000;
/** Entries removed per write when the log is pruned. */
const PRUNE_PAGE = 500;

/**
 * Removes a webhook's oldest delivery log entries beyond `keep` (all of them with 0, for a
 * deleted webhook), a page at a time: the log of a busy webhook stays bounded.
 */
export async function pruneDeliveries(readModels: ReadModelStore, instanceId: string, webhookId: string, keep = DELIVERY_LOG_ENTRIES): Promise<void> {
  const where = { instance_id: instanceId, webhook_id: webhookId };
  for (;;) {
    const excess = (await readModels.count(WEBHOOK_DELIVERIES, where)) - keep;
    if (excess <= 0) return;
    const oldest = await readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, { where, sort: [{ field: 'delivered_at' }], limit: Math.min(excess, PRUNE_PAGE) });
    if (oldest.length === 0) return;
    await readModels.applyBatch(oldest.map((d) => ({ collection: WEBHOOK_DELIVERIES, kind: 'delete' as const, id: d._id })), {});
  }
}
