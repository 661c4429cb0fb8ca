import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verify } from '../../../../test/support/chatkit-webhook-receiver';
import type { ChatkitWebhookEvent } from '../domain/chatkit-webhook-events';
import { webhookRequest } from './webhook-request';

const event: ChatkitWebhookEvent = {
  type: 'v1.messages_created',
  id: '0b7e7a1c-3f7e-5d2a-9c1b-2f4e6a8b0c1d',
  timestamp: '2026-03-01T10:00:00.000Z',
  payload: { messages: [{ id: 42, user_id: 'ben', room_id: 'general', parts: [{ type: 'text/plain', content: 'héllo "there" ✓' }] }] },
};
const webhook = { id: 'wh-1', secret: 'a shared secret', customData: { app: 'crm' } };

describe('webhookRequest', () => {
  it("is Chatkit's body: payload, metadata (created_at, event_type, event_id, product) and custom_data", () => {
    const { body } = webhookRequest(webhook, event);
    expect(JSON.parse(body)).toEqual({
      payload: event.payload,
      metadata: { created_at: event.timestamp, event_type: 'v1.messages_created', event_id: event.id, product: 'chatkit' },
      custom_data: { app: 'crm' },
    });
    expect(JSON.parse(webhookRequest({ id: 'wh-2', secret: 's' }, event).body).custom_data).toEqual({});
  });

  it("carries Chatkit's headers: user agent, content type, event type, webhook id, request id (the event's) and the hex HMAC-SHA1 of the body", () => {
    const { body, headers } = webhookRequest(webhook, event);
    expect(headers).toEqual({
      'user-agent': 'pusher-webhooks',
      'content-type': 'application/json',
      'webhook-event-type': 'v1.messages_created',
      'webhook-id': 'wh-1',
      'webhook-request-id': event.id,
      'webhook-signature': createHmac('sha1', 'a shared secret').update(body).digest('hex'),
    });
    expect(headers['webhook-signature']).toMatch(/^[0-9a-f]{40}$/);
  });

  it("verifies as Chatkit's receivers check it, and not with another secret or another body", () => {
    const { body, headers } = webhookRequest(webhook, event);
    expect(verify({ secret: 'a shared secret' }, body, headers)).toBe(true);
    expect(verify({ secret: 'another secret' }, body, headers)).toBe(false);
    expect(verify({ secret: 'a shared secret' }, body.replace('42', '43'), headers)).toBe(false);
  });

  it('is the same bytes and headers for every attempt of an event (retries, redeliveries, replays)', () => {
    const first = webhookRequest(webhook, event, new Date('2026-03-01T10:00:01Z'));
    const later = webhookRequest(webhook, event, new Date('2026-03-01T11:30:00Z'));
    expect(later).toEqual(first);
  });

  it('signs as Standard Webhooks when asked: the standardwebhooks library verifies it, the attempt’s time in webhook-timestamp', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const attemptAt = new Date();
    const { body, headers } = webhookRequest({ id: 'wh-3', secret, standardWebhooks: true }, event, attemptAt);
    expect(headers).toMatchObject({
      'webhook-id': event.id,
      'webhook-webhook-id': 'wh-3',
      'webhook-request-id': event.id,
      'webhook-event-type': 'v1.messages_created',
      'webhook-timestamp': String(Math.floor(attemptAt.getTime() / 1000)),
    });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verify({ secret, standardWebhooks: true }, body, headers)).toBe(true);
    expect(new Webhook(secret).sign(event.id, attemptAt, body)).toBe(headers['webhook-signature']);
    expect(verify({ secret: `whsec_${randomBytes(24).toString('base64')}`, standardWebhooks: true }, body, headers)).toBe(false);
  });

  it('a Standard Webhooks retry long after the event carries its own time, which the library accepts (the event time it would refuse)', () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const old = { ...event, timestamp: new Date(Date.now() - 3_600_000).toISOString() };
    const retry = webhookRequest({ id: 'wh-3', secret, standardWebhooks: true }, old, new Date());
    expect(() => new Webhook(secret).verify(retry.body, retry.headers)).not.toThrow();
    const stale = webhookRequest({ id: 'wh-3', secret, standardWebhooks: true }, old);
    expect(() => new Webhook(secret).verify(stale.body, stale.headers)).toThrow(/timestamp/i);
  });
});
