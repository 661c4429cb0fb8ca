import { createHmac, KeyObject } from 'node:crypto';

/** The header Beams webhooks carry their signature in (Beams webhook docs, "Request format"). */
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** The hex HMAC-SHA1 of the exact body bytes, keyed by the instance key's secret, as Beams signs its webhooks. */
export const webhookSignature = (body: string, secret: KeyObject | string): string =>
  createHmac('sha1', secret).update(body, 'utf8').digest('hex');
