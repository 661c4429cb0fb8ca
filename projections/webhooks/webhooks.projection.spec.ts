import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { WEBHOOKS, webhookDocumentId, webhooksProjection } from './webhooks.projection';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const secret = { alg: 'aes-256-gcm', iv: 'aXY=', tag: 'dGFn', ciphertext: 'Y2lwaGVy' } as const;
const created = (stream: string) =>
  recorded(stream, 'WebhookCreated', { url: 'https://hooks.example.com/a', secret, event_types: ['v1.messages_created'], custom_data: { team: 'search' }, created_at: at });

describe('webhooks projection', () => {
  it('lists a webhook with its settings and state, never its secret, and the revision it reflects', async () => {
    const docs = await project(webhooksProjection, [
      created('webhook-acme.w1'),
      { ...recorded('webhook-acme.w1', 'WebhookDeactivated', { by: 'delivery', event_id: 'e1', attempts: 5, response_code: 500, at: later }), revision: 1 },
    ]);
    expect([...docs.values()]).toEqual([
      expect.objectContaining({
        instance_id: 'acme',
        id: 'w1',
        url: 'https://hooks.example.com/a',
        event_types: ['v1.messages_created'],
        custom_data: { team: 'search' },
        standard_webhooks: false,
        active: false,
        deactivation: { by: 'delivery', event_id: 'e1', attempts: 5, response_code: 500, at: later },
        created_at: at,
        updated_at: later,
        revision: 1,
      }),
    ]);
    expect(JSON.stringify([...docs.values()])).not.toContain('ciphertext');
    expect([...docs.keys()]).toEqual([`${WEBHOOKS}|${webhookDocumentId('acme', 'w1')}`]);
  });

  it('keeps state across an update and a reactivation, counts replays, and drops a deleted webhook', async () => {
    const docs = await project(webhooksProjection, [
      created('webhook-acme.w1'),
      created('webhook-acme.w2'),
      recorded('webhook-acme.w1', 'WebhookDeactivated', { by: 'request', at }),
      recorded('webhook-acme.w1', 'WebhookUpdated', { url: 'https://hooks.example.com/b', secret, event_types: ['v1.users_created'], updated_at: later }),
      recorded('webhook-acme.w1', 'WebhookActivated', { at: later }),
      recorded('webhook-acme.w1', 'WebhookReplayRequested', { replay: 1, from_position: null, at: later }),
      recorded('webhook-acme.w2', 'WebhookDeleted', { deleted_at: later }),
    ]);
    expect([...docs.values()]).toEqual([
      expect.objectContaining({ id: 'w1', url: 'https://hooks.example.com/b', event_types: ['v1.users_created'], active: true, deactivation: null, replay: 1, created_at: at }),
    ]);
    expect([...docs.values()][0].custom_data).toBeUndefined();
  });
});
