import type { EventStore } from '../../../shared/ports/event-store.port';
import type { ReadModelStore } from '../../../shared/ports/read-model-store.port';
import type { ChatkitWebhookContext } from '../domain/chatkit-webhook-events';

/** What a process that maps log events to Chatkit webhook events can look things up in. */
export interface WebhookContextSources {
  readonly events: EventStore;
  readonly readModels: ReadModelStore;
}

/**
 * The lookups `chatkitWebhookEventsOf` gets for one instance's events: the one place the worker,
 * redeliveries and the pull feed take them from, so that all three map an event alike.
 */
export function webhookContext(_sources: WebhookContextSources, _instanceId: string): ChatkitWebhookContext {
  return {};
}
