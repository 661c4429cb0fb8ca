import type { WebhookDocument } from '../../../../projections/webhooks/webhooks.projection';
import type { WebhookState } from '../domain/webhook.decider';

/** What the API shows of a webhook: never its secret. */
export interface WebhookView {
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly custom_data?: unknown;
  readonly standard_webhooks: boolean;
  readonly active: boolean;
  /** Why and when it was deactivated (by its deliveries failing, or a PUT), while it is inactive. */
  readonly deactivated?: Record<string, unknown>;
  readonly created_at: string;
  readonly updated_at: string;
}

const deactivatedView = (d: NonNullable<WebhookState['deactivation']>) => ({
  by: d.by,
  at: d.at,
  ...(d.event_id !== undefined && { event_id: d.event_id }),
  ...(d.event_type !== undefined && { event_type: d.event_type }),
  ...(d.attempts !== undefined && { attempts: d.attempts }),
  ...(d.response_code !== undefined && { response_code: d.response_code }),
  ...(d.error !== undefined && { error: d.error }),
});

export function presentWebhook(id: string, state: WebhookState): WebhookView {
  const settings = state.settings!;
  return {
    id,
    url: settings.url,
    event_types: settings.event_types,
    ...(settings.custom_data !== undefined && { custom_data: settings.custom_data }),
    standard_webhooks: settings.standard_webhooks === true,
    active: state.active,
    ...(!state.active && state.deactivation && { deactivated: deactivatedView(state.deactivation) }),
    created_at: state.createdAt!,
    updated_at: state.updatedAt!,
  };
}

export function presentWebhookDocument(doc: WebhookDocument): WebhookView {
  return {
    id: doc.id,
    url: doc.url,
    event_types: doc.event_types,
    ...(doc.custom_data !== undefined && { custom_data: doc.custom_data }),
    standard_webhooks: doc.standard_webhooks,
    active: doc.active,
    ...(!doc.active && doc.deactivation && { deactivated: deactivatedView(doc.deactivation) }),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}
