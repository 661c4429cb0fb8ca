import { randomBytes } from 'node:crypto';
import { webhookRequest } from '../../src/modules/webhooks/deliver-webhooks/webhook-request';
import type { ChatkitWebhookEvent } from '../../src/modules/webhooks/domain/chatkit-webhook-events';
import { ChatkitWebhookReceiver } from './chatkit-webhook-receiver';

const event: ChatkitWebhookEvent = {
  type: 'v1.rooms_deleted',
  id: '6f1c2d3e-4a5b-5c6d-8e7f-8091a2b3c4d5',
  timestamp: new Date().toISOString(),
  payload: { room_ids: ['general'] },
};

const post = (url: string, request: { body: string; headers: Record<string, string> }) =>
  fetch(url, { method: 'POST', body: request.body, headers: request.headers });

describe('ChatkitWebhookReceiver', () => {
  let receiver: ChatkitWebhookReceiver | undefined;
  afterEach(() => receiver?.stop());

  it("accepts a delivery signed with the webhook's secret, and answers 401 to one signed otherwise", async () => {
    receiver = await ChatkitWebhookReceiver.start({ secret: 'the secret' });
    expect((await post(receiver.url, webhookRequest({ id: 'wh', secret: 'the secret' }, event))).status).toBe(200);
    expect((await post(receiver.url, webhookRequest({ id: 'wh', secret: 'not it' }, event))).status).toBe(401);
    const accepted = await receiver.ofType('v1.rooms_deleted');
    expect(accepted.event?.payload).toEqual({ room_ids: ['general'] });
    expect(receiver.received.map((r) => [r.verified, r.status])).toEqual([
      [true, 200],
      [false, 401],
    ]);
  });

  it('verifies Standard Webhooks with the standardwebhooks library, and answers as told', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    receiver = await ChatkitWebhookReceiver.start({ secret, standardWebhooks: true, answer: (n) => (n === 0 ? 500 : 204) });
    const request = webhookRequest({ id: 'wh', secret, standardWebhooks: true }, event, new Date());
    expect((await post(receiver.url, request)).status).toBe(500);
    expect((await post(receiver.url, request)).status).toBe(204);
    expect((await post(receiver.url, webhookRequest({ id: 'wh', secret: 'plain' }, event))).status).toBe(401);
    expect(receiver.accepted()).toHaveLength(1);
  });
});
