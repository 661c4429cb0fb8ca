import type { Actor, RecordedEvent } from '../../../shared/domain/event';
import type { BeamsPublishEvent, PublishTarget } from './beams.events';

/** Where one webhook event of a publish stands: its latest attempt. */
export interface PublishWebhookReport {
  readonly event_type: string;
  readonly attempts: number;
  readonly outcome: 'delivered' | 'retrying' | 'given_up';
  readonly status: number | null;
  readonly error: string | null;
  readonly attempted_at: string;
  readonly next_attempt_at: string | null;
}

/**
 * A Beams publish as its stream tells it: who published what to whom and when, then (once the
 * delivery worker is done with every matching device) `status: "delivered"` and the counts, and
 * the state of each publish webhook. `pending` until then.
 */
export interface PublishReport {
  readonly publish_id: string;
  readonly status: 'pending' | 'delivered';
  readonly target: PublishTarget;
  readonly accepted_at: string;
  readonly accepted_by: Actor | null;
  readonly webhook_url: string | null;
  readonly delivery: { devices: number; delivered: number; failed: number; removed: number; delivered_at: string } | null;
  readonly webhooks: readonly PublishWebhookReport[];
}

/** The report of a publish from its stream's events, oldest first; null for a stream with no accepted publish. */
export function publishReport(events: readonly RecordedEvent<BeamsPublishEvent>[]): PublishReport | null {
  let report = null as PublishReport | null;
  const webhooks = new Map<string, PublishWebhookReport>();
  for (const event of events) {
    switch (event.type) {
      case 'BeamsPublishAccepted': {
        const { publish_id, target, webhook_url, accepted_at } = event.data;
        report = { publish_id, status: 'pending', target, accepted_at, accepted_by: event.metadata?.actor ?? null, webhook_url, delivery: null, webhooks: [] };
        break;
      }
      case 'BeamsPublishDelivered': {
        const { devices, delivered, failed, removed, delivered_at } = event.data;
        if (report) report = { ...report, status: 'delivered', delivery: { devices, delivered, failed, removed, delivered_at } };
        break;
      }
      case 'BeamsPublishWebhookAttempted': {
        const { event_type, attempt, outcome, status, error, attempted_at, next_attempt_at } = event.data;
        webhooks.set(event_type, { event_type, attempts: attempt, outcome, status, error, attempted_at, next_attempt_at });
        break;
      }
    }
  }
  return report && { ...report, webhooks: [...webhooks.values()] };
}
