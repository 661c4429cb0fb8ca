import { deciderSpecification } from '../../../../test/support/decider-specification';
import type { SealedSecret } from '../../../shared/crypto/secret-box';
import { webhookDecider } from './webhook.decider';
import { WebhookEvent, WebhookSettings } from './webhook.events';

const now = '2026-01-01T00:00:00.000Z';
const secret: SealedSecret = { alg: 'aes-256-gcm', iv: 'aXY=', tag: 'dGFn', ciphertext: 'Y2lwaGVy' };
const settings: WebhookSettings = { url: 'https://hooks.example.com/chatkit', secret, event_types: ['v1.messages_created'] };
const given = deciderSpecification(webhookDecider);
const created: WebhookEvent = { type: 'WebhookCreated', data: { ...settings, created_at: now } };
const failure = { event_id: 'e1', event_type: 'v1.messages_created', attempts: 5, response_code: 500 };
const deactivated: WebhookEvent = { type: 'WebhookDeactivated', data: { by: 'delivery', ...failure, at: now } };
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { deleted_at: now } };

describe('webhook decider', () => {
  it('creates a webhook once', () => {
    given().when({ type: 'CreateWebhook', settings, now }).then([created]);
    given(created).when({ type: 'CreateWebhook', settings, now }).thenNothingHappened();
    given(created, deleted).when({ type: 'CreateWebhook', settings, now }).thenNothingHappened();
  });

  it('updates the settings, and activates or deactivates only on a change of state', () => {
    const other = { ...settings, url: 'https://hooks.example.com/other' };
    given(created).when({ type: 'UpdateWebhook', settings: other, now }).then([{ type: 'WebhookUpdated', data: { ...other, updated_at: now } }]);
    given(created)
      .when({ type: 'UpdateWebhook', settings, active: false, now })
      .then([
        { type: 'WebhookUpdated', data: { ...settings, updated_at: now } },
        { type: 'WebhookDeactivated', data: { by: 'request', at: now } },
      ]);
    given(created).when({ type: 'UpdateWebhook', settings, active: true, now }).then([{ type: 'WebhookUpdated', data: { ...settings, updated_at: now } }]);
    given(created, deactivated)
      .when({ type: 'UpdateWebhook', settings, active: true, now })
      .then([
        { type: 'WebhookUpdated', data: { ...settings, updated_at: now } },
        { type: 'WebhookActivated', data: { at: now } },
      ]);
  });

  it('is deactivated by its deliveries once: two workers that saw the last attempt fail record it once', () => {
    given(created).when({ type: 'DeactivateWebhook', failure, now }).then([deactivated]);
    given(created, deactivated).when({ type: 'DeactivateWebhook', failure, now }).thenNothingHappened();
  });

  it('numbers its replays, each from its own position', () => {
    given(created).when({ type: 'ReplayWebhook', fromPosition: null, now }).then([{ type: 'WebhookReplayRequested', data: { replay: 1, from_position: null, at: now } }]);
    given(created, { type: 'WebhookReplayRequested', data: { replay: 1, from_position: null, at: now } })
      .when({ type: 'ReplayWebhook', fromPosition: '00000000000000000042', now })
      .then([{ type: 'WebhookReplayRequested', data: { replay: 2, from_position: '00000000000000000042', at: now } }]);
  });

  it('numbers redelivery requests and keeps the latest ones for the worker', () => {
    const delivery = { delivery_id: 'd1', event_id: 'e1', position: '00000000000000000042', after_position: '00000000000000000040' };
    const first: WebhookEvent = { type: 'WebhookRedeliveryRequested', data: { redelivery: 1, ...delivery, at: now } };
    given(created).when({ type: 'RedeliverDelivery', delivery, now }).then([first]);
    given(created, first).when({ type: 'RedeliverDelivery', delivery, now }).then([{ type: 'WebhookRedeliveryRequested', data: { redelivery: 2, ...delivery, at: now } }]);
  });

  it('refuses every change to a webhook that does not exist or was deleted', () => {
    for (const history of [[], [created, deleted]]) {
      given(...history).when({ type: 'UpdateWebhook', settings, now }).thenThrows({ category: 'not_found', reason: 'webhook_not_found' });
      given(...history).when({ type: 'DeleteWebhook', now }).thenThrows({ category: 'not_found', reason: 'webhook_not_found' });
      given(...history).when({ type: 'ReplayWebhook', fromPosition: null, now }).thenThrows({ category: 'not_found', reason: 'webhook_not_found' });
    }
  });
});
