import { DomainEvent } from '../../../shared/domain/event';
import type { SealedSecret } from '../../../shared/crypto/secret-box';
import type { ChatkitWebhookEventType } from './chatkit-webhook-events';

/**
 * What a webhook is set to: where it posts, the event types it wants, the `custom_data` every
 * delivery carries, and whether it signs as Standard Webhooks too. The secret is sealed with the
 * master key (as instance key secrets are): the log never holds it in plain text.
 */
export interface WebhookSettings {
  readonly url: string;
  readonly secret: SealedSecret;
  readonly event_types: readonly ChatkitWebhookEventType[];
  readonly custom_data?: unknown;
  readonly standard_webhooks?: boolean;
}

export type WebhookCreated = DomainEvent<'WebhookCreated', WebhookSettings & { created_at: string }>;
/** The whole settings as a PUT left them (a PUT replaces them). */
export type WebhookUpdated = DomainEvent<'WebhookUpdated', WebhookSettings & { updated_at: string }>;
/**
 * `by: 'delivery'`: every attempt of one event's delivery failed (`event_id`, `response_code`
 * of the last, `error` when it got no status); `by: 'request'`: a PUT set `active: false`.
 * Deliveries stop where they were: the event that failed is the first delivered on reactivation.
 */
export type WebhookDeactivated = DomainEvent<
  'WebhookDeactivated',
  { by: 'delivery' | 'request'; event_id?: string; event_type?: string; response_code?: number | null; error?: string; attempts?: number; at: string }
>;
export type WebhookActivated = DomainEvent<'WebhookActivated', { at: string }>;
/**
 * Deliveries start again from `from_position` (exclusive; null: the start of the log), under a new
 * `replay` number: each replay has its own checkpoint, so the one of the previous never counts.
 */
export type WebhookReplayRequested = DomainEvent<'WebhookReplayRequested', { replay: number; from_position: string | null; at: string }>;
/**
 * One delivery sent again (the `redelivery`-th of the webhook): the event at `position` in the
 * log (read after `after_position`) that carried `event_id`. Its worker sends it before going on.
 */
export type WebhookRedeliveryRequested = DomainEvent<
  'WebhookRedeliveryRequested',
  { redelivery: number; delivery_id: string; event_id: string; position: string; after_position: string | null; at: string }
>;
export type WebhookDeleted = DomainEvent<'WebhookDeleted', { deleted_at: string }>;

export type WebhookEvent = WebhookCreated | WebhookUpdated | WebhookDeactivated | WebhookActivated | WebhookReplayRequested | WebhookRedeliveryRequested | WebhookDeleted;

export const WEBHOOK_EVENT_TYPES: WebhookEvent['type'][] = [
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeactivated',
  'WebhookActivated',
  'WebhookReplayRequested',
  'WebhookRedeliveryRequested',
  'WebhookDeleted',
];
