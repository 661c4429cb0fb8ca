import { deciderSpecification } from '../../../../test/support/decider-specification';
import { AcceptPublish, beamsPublishDecider, beamsUserDecider, RecordDelivery, RecordWebhookAttempt } from './beams.deciders';
import { BeamsPublishEvent, BeamsPublishWebhookAttempted } from './beams.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:00:05.000Z';

describe('beams publish decider', () => {
  const given = deciderSpecification(beamsPublishDecider);
  const accept: AcceptPublish = {
    type: 'AcceptPublish',
    publishId: 'p1',
    target: { kind: 'interests', interests: ['donuts'] },
    request: { interests: ['donuts'], web: { notification: { title: 'Hi' } } },
    webhookUrl: 'https://hooks.example/beams',
    now,
  };
  const accepted: BeamsPublishEvent = {
    type: 'BeamsPublishAccepted',
    data: {
      publish_id: 'p1',
      target: { kind: 'interests', interests: ['donuts'] },
      request: { interests: ['donuts'], web: { notification: { title: 'Hi' } } },
      webhook_url: 'https://hooks.example/beams',
      accepted_at: now,
    },
  };
  const delivery: RecordDelivery = { type: 'RecordDelivery', devices: 3, delivered: 1, failed: 1, removed: 1, now: later };
  const delivered: BeamsPublishEvent = {
    type: 'BeamsPublishDelivered',
    data: { devices: 3, delivered: 1, failed: 1, removed: 1, delivered_at: later },
  };
  const attempt = (n: number, outcome: BeamsPublishWebhookAttempted['data']['outcome'], event_type = 'v1.PublishAccepted'): BeamsPublishWebhookAttempted['data'] => ({
    event_type,
    event_id: `p1.${event_type}`,
    attempt: n,
    status: outcome === 'retrying' ? 500 : 200,
    error: null,
    outcome,
    next_attempt_at: outcome === 'retrying' ? later : null,
    attempted_at: later,
  });
  const record = (data: BeamsPublishWebhookAttempted['data']): RecordWebhookAttempt => ({ type: 'RecordWebhookAttempt', attempt: data });
  const recorded = (data: BeamsPublishWebhookAttempted['data']): BeamsPublishEvent => ({ type: 'BeamsPublishWebhookAttempted', data });

  it('accepts a publish once: accepting it again (a retried request) adds nothing', () => {
    given().when(accept).then([accepted]);
    given(accepted).when(accept).thenNothingHappened();
  });

  it('records a publish\'s delivery once, and none for a publish never accepted', () => {
    given(accepted).when(delivery).then([delivered]);
    given(accepted, delivered).when(delivery).thenNothingHappened();
    given().when(delivery).thenNothingHappened();
  });

  it('records each webhook attempt once, in order: a repeated or skipped attempt number adds nothing', () => {
    given(accepted).when(record(attempt(1, 'retrying'))).then([recorded(attempt(1, 'retrying'))]);
    given(accepted, recorded(attempt(1, 'retrying'))).when(record(attempt(1, 'retrying'))).thenNothingHappened();
    given(accepted, recorded(attempt(1, 'retrying'))).when(record(attempt(2, 'delivered'))).then([recorded(attempt(2, 'delivered'))]);
    given(accepted).when(record(attempt(2, 'delivered'))).thenNothingHappened();
    given().when(record(attempt(1, 'delivered'))).thenNothingHappened();
  });

  it('records no attempt of a webhook once it is delivered or given up; each webhook event type counts on its own', () => {
    for (const settled of ['delivered', 'given_up'] as const) {
      given(accepted, recorded(attempt(1, settled))).when(record(attempt(2, 'retrying'))).thenNothingHappened();
    }
    given(accepted, recorded(attempt(1, 'delivered')))
      .when(record(attempt(1, 'delivered', 'v1.PublishToInterestsAttempt')))
      .then([recorded(attempt(1, 'delivered', 'v1.PublishToInterestsAttempt'))]);
  });
});

describe('beams user decider', () => {
  const given = deciderSpecification(beamsUserDecider);
  const deleted = (deleted_at: string, device_ids: string[] = [], publish_ids: string[] = []) => ({
    type: 'BeamsUserDeleted' as const,
    data: { user_id: 'alice', deleted_at, device_ids, publish_ids },
  });
  const deleteUser = (at: string, deviceIds: string[] = [], publishIds: string[] = []) => ({ type: 'DeleteBeamsUser' as const, userId: 'alice', deviceIds, publishIds, now: at });

  it('records every delete asked for: the user may have registered devices since the last one', () => {
    given().when(deleteUser(now)).then([deleted(now)]);
    given(deleted(now)).when(deleteUser(later)).then([deleted(later)]);
    expect(beamsUserDecider.foldsFrom!(deleted(now))).toBe(true);
  });

  it('names the devices and undelivered publishes of the user it forgets (what it destroys)', () => {
    given().when(deleteUser(now, ['web-1'], ['pubid-1'])).then([deleted(now, ['web-1'], ['pubid-1'])]);
  });
});
