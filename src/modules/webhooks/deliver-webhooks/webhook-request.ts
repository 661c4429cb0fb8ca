import { createHmac } from 'node:crypto';
import type { ChatkitWebhookEvent } from '../domain/chatkit-webhook-events';

/** The user agent Chatkit's webhooks came with (docs.pusher.com/chatkit/webhooks, "Request Format"). */
export const CHATKIT_WEBHOOK_USER_AGENT = 'pusher-webhooks';
/** Standard Webhooks' secrets are `whsec_` and the base64 of the key (standardwebhooks.com, "Signature scheme"). */
export const STANDARD_WEBHOOKS_SECRET_PREFIX = 'whsec_';

export interface WebhookSigning {
  readonly id: string;
  readonly secret: string;
  readonly customData?: unknown;
  /** Sign as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…`) instead of Chatkit's hex HMAC-SHA1. */
  readonly standardWebhooks?: boolean;
}

/**
 * The exact bytes and headers of one delivery of `event` to `webhook`. The body is Chatkit's
 * (docs.pusher.com/chatkit/webhooks, "Body"): `payload`, `metadata` (`created_at`, `event_type`,
 * `event_id`, `product`) and the webhook's `custom_data`; it and Chatkit's headers are a function
 * of the webhook and the event alone, so every retry, redelivery and replay sends the same bytes.
 *
 * Chatkit's signature (the default): `webhook-signature` is the hex HMAC-SHA1 of the body with the
 * secret, which receivers check as `createHmac('sha1', secret).update(rawBody).digest('hex')`
 * (`GetStream/pusher-chatkit-migration` `webhook/server.js`). `webhook-id` names the webhook and
 * `webhook-request-id` the event (the same on every retry).
 *
 * Standard Webhooks (per webhook, opt-in): the spec's own header names collide with Chatkit's
 * (`webhook-id`, `webhook-signature`), so such a webhook gets the spec's meaning of them:
 * `webhook-id` is the event's id, `webhook-timestamp` the attempt's time in seconds (`attemptAt`;
 * the spec's verifiers refuse a timestamp more than five minutes off, so a retry an hour later
 * carries its own), and `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` with the key the secret encodes: base64 after an
 * optional `whsec_`, as the spec's libraries read it. The webhook's id stays in `webhook-webhook-id`.
 */
export function webhookRequest(
  webhook: WebhookSigning,
  event: ChatkitWebhookEvent,
  attemptAt: Date = new Date(event.timestamp),
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ payload: event.payload, metadata: chatkitMetadata(event), custom_data: webhook.customData ?? {} });
  const common = {
    'user-agent': CHATKIT_WEBHOOK_USER_AGENT,
    'content-type': 'application/json',
    'webhook-event-type': event.type,
    'webhook-request-id': event.id,
  };
  if (!webhook.standardWebhooks) {
    return {
      body,
      headers: { ...common, 'webhook-id': webhook.id, 'webhook-signature': createHmac('sha1', webhook.secret).update(body).digest('hex') },
    };
  }
  const timestamp = String(Math.floor(attemptAt.getTime() / 1000));
  return {
    body,
    headers: {
      ...common,
      'webhook-webhook-id': webhook.id,
      'webhook-id': event.id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${standardWebhooksSignature(webhook.secret, event.id, timestamp, body)}`,
    },
  };
}

/** A delivery's `metadata` (Chatkit's: when the change happened, the type, the event's id, the product), also what the pull feed shows. */
export const chatkitMetadata = (event: ChatkitWebhookEvent) => ({ created_at: event.timestamp, event_type: event.type, event_id: event.id, product: 'chatkit' });

/** The base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` (Standard Webhooks, "Signature scheme"). */
export const standardWebhooksSignature = (secret: string, id: string, timestamp: string, body: string): string =>
  createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');

const standardWebhooksKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX) ? secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length) : secret, 'base64');
