import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { beamsPendingPublishesProjection } from './beams-pending-publishes.projection';

const at = '2026-01-01T00:00:00.000Z';
const accepted = (publishId: string, users: string[]) =>
  recorded(`beamspublish-acme.${publishId}`, 'BeamsPublishAccepted', {
    publish_id: publishId,
    target: { kind: 'users', users },
    request: { web: { notification: { title: publishId } } },
    webhook_url: null,
    accepted_at: at,
  });

describe('beams pending publishes projection', () => {
  it('lists a publish until it is delivered', async () => {
    const docs = await project(beamsPendingPublishesProjection, [
      accepted('pubid-1', ['alice']),
      accepted('pubid-2', ['bob']),
      recorded('beamspublish-acme.pubid-1', 'BeamsPublishDelivered', { devices: 0, delivered: 0, failed: 0, removed: 0, delivered_at: at }),
    ]);
    expect([...docs.values()].map((d) => d.publish_id)).toEqual(['pubid-2']);
  });

  it('empties the notification of the undelivered publishes a user delete names (delivered then as nothing), and no other', async () => {
    const docs = await project(beamsPendingPublishesProjection, [
      accepted('pubid-1', ['alice']),
      accepted('pubid-2', ['bob']),
      recorded('beamsuser-acme.alice', 'BeamsUserDeleted', { user_id: 'alice', deleted_at: at, device_ids: [], publish_ids: ['pubid-1', 'pubid-gone'] }),
      recorded('beamsuser-acme.bob', 'BeamsUserDeleted', { user_id: 'bob', deleted_at: at }),
    ]);
    expect([...docs.values()].map((d) => [d.publish_id, d.request]).sort()).toEqual([
      ['pubid-1', {}],
      ['pubid-2', { web: { notification: { title: 'pubid-2' } } }],
    ]);
  });
});
