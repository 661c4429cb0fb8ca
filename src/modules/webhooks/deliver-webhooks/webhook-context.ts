import type { RecordedEvent } from '../../../shared/domain/event';
import type { ChatkitWebhookContext } from '../domain/chatkit-webhook-events';

/**
 * The lookups `chatkitWebhookEventsOf` gets for one log event: what the process supplies to the
 * worker (`startWebhookDelivery`), redeliveries and the pull feed (`WEBHOOK_CONTEXT_AT` in Nest),
 * so all three map an event alike.
 */
export type WebhookContextAt = (event: RecordedEvent) => ChatkitWebhookContext;
export const WEBHOOK_CONTEXT_AT = Symbol('WebhookContextAt');
