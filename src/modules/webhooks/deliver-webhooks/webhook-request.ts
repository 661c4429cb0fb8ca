import { createHmac } from 'node:crypto';
import type { ChatkitWebhookEvent } from '../domain/chatkit-webhook-events';

/**
 * The exact bytes and headers of one delivery: a function of the webhook and the event only, so
 * every retry, redelivery and replay of an event sends the same request. Chatkit's body
 * (`metadata`, `payload`, `custom_data`) and its `webhook-signature`, the hex HMAC-SHA1 of the
 * body with the webhook's secret, as `GetStream/pusher-chatkit-migration` `webhook/server.js`
 * verifies it. (`webhook-events` owns the full header set and the Standard Webhooks signature.)
 */
export function webhookRequest(
  webhook: { id: string; secret: string; customData?: unknown; standardWebhooks?: boolean },
  event: ChatkitWebhookEvent,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    metadata: { event_type: event.type, event_id: event.id, timestamp: event.timestamp, webhook_id: webhook.id },
    payload: event.payload,
    ...(webhook.customData === undefined ? {} : { custom_data: webhook.customData }),
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-event-type': event.type,
      'webhook-id': webhook.id,
      'webhook-request-id': event.id,
      'webhook-signature': createHmac('sha1', webhook.secret).update(body).digest('hex'),
    },
  };
}
