import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { WebhookDeactivated, WebhookEvent } from '../../src/modules/webhooks/domain/webhook.events';
import type { Document, ProjectionDefinition } from '../projection';

export const WEBHOOKS = 'webhooks';
/** The webhook streams' category (`webhook-<instance>.<id>`), as the webhooks' domain names it. */
const WEBHOOK_CATEGORY = 'webhook';

/**
 * A webhook as the list shows it and the delivery worker finds it: never its secret (the worker
 * reads that from the webhook's stream). `revision`: the stream revision folded, so the worker
 * sees that a webhook changed (settings, activation, replay) and starts its deliveries afresh.
 */
export interface WebhookDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly custom_data?: unknown;
  readonly standard_webhooks: boolean;
  readonly active: boolean;
  readonly deactivation: WebhookDeactivated['data'] | null;
  readonly replay: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly revision: number;
}

export const webhookDocumentId = (instanceId: string, webhookId: string) => documentId(instanceId, webhookId);

/** Every live webhook of every instance; a deleted one goes. */
export const webhooksProjection: ProjectionDefinition<WebhookEvent, WebhookDocument> = {
  name: 'webhooks',
  version: 1,
  // By `active` too: the operator API's health lists the webhooks deliveries stopped, across instances.
  collections: [{ name: WEBHOOKS, indexes: [{ fields: ['instance_id', 'created_at'] }, { fields: ['active'] }] }],
  handles: ['WebhookCreated', 'WebhookUpdated', 'WebhookDeactivated', 'WebhookActivated', 'WebhookReplayRequested', 'WebhookRedeliveryRequested', 'WebhookDeleted'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    if (!stream || stream.category !== WEBHOOK_CATEGORY) return [];
    return [{ collection: WEBHOOKS, id: webhookDocumentId(stream.instanceId, stream.id) }];
  },

  evolve(document, event) {
    const stream = parseStreamName(event.streamName)!;
    switch (event.type) {
      case 'WebhookCreated':
      case 'WebhookUpdated': {
        const { url, event_types, custom_data, standard_webhooks } = event.data;
        const at = event.type === 'WebhookCreated' ? event.data.created_at : event.data.updated_at;
        return {
          _id: '',
          instance_id: stream.instanceId,
          id: stream.id,
          url,
          event_types,
          ...(custom_data !== undefined && { custom_data }),
          standard_webhooks: standard_webhooks === true,
          active: document?.active ?? true,
          deactivation: document?.deactivation ?? null,
          replay: document?.replay ?? 0,
          created_at: document?.created_at ?? at,
          updated_at: at,
          revision: event.revision,
        };
      }
      case 'WebhookDeactivated':
        return document && { ...document, active: false, deactivation: event.data, updated_at: event.data.at, revision: event.revision };
      case 'WebhookActivated':
        return document && { ...document, active: true, deactivation: null, updated_at: event.data.at, revision: event.revision };
      case 'WebhookReplayRequested':
        return document && { ...document, replay: event.data.replay, updated_at: event.data.at, revision: event.revision };
      case 'WebhookRedeliveryRequested':
        return document && { ...document, updated_at: event.data.at, revision: event.revision };
      case 'WebhookDeleted':
        return null;
      default:
        return document;
    }
  },
};
