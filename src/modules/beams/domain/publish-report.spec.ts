import type { RecordedEvent } from '../../../shared/domain/event';
import type { BeamsPublishEvent, BeamsPublishWebhookAttempted } from './beams.events';
import { publishReport } from './publish-report';

let position = 0;
const recorded = (event: BeamsPublishEvent): RecordedEvent<BeamsPublishEvent> =>
  ({
    ...event,
    id: `e${++position}`,
    streamName: 'beamspublish-i.p1',
    revision: position - 1,
    position: String(position).padStart(20, '0'),
    metadata: { occurred_at: '2026-05-01T10:00:00.000Z', actor: { key_id: 'k1', su: true } },
    recordedAt: '2026-05-01T10:00:00.000Z',
  }) as RecordedEvent<BeamsPublishEvent>;

const accepted = recorded({
  type: 'BeamsPublishAccepted',
  data: { publish_id: 'p1', target: { kind: 'interests', interests: ['news'] }, request: { web: {} }, webhook_url: 'https://hooks.example.com/beams', accepted_at: '2026-05-01T10:00:00.000Z' },
});
const attempt = (data: Partial<BeamsPublishWebhookAttempted['data']>) =>
  recorded({
    type: 'BeamsPublishWebhookAttempted',
    data: { event_type: 'v1.PublishAccepted', event_id: 'p1.accepted', attempt: 1, status: 200, error: null, outcome: 'delivered', next_attempt_at: null, attempted_at: '2026-05-01T10:00:01.000Z', ...data },
  });

describe('publishReport (a Beams publish from its stream)', () => {
  it('is null for a stream with no accepted publish', () => {
    expect(publishReport([])).toBeNull();
  });

  it('is pending until delivered, names its publisher, and keeps each webhook at its latest attempt', () => {
    const retrying = attempt({ attempt: 1, status: 500, outcome: 'retrying', next_attempt_at: '2026-05-01T10:00:05.000Z' });
    expect(publishReport([accepted, retrying])).toEqual({
      publish_id: 'p1',
      status: 'pending',
      target: { kind: 'interests', interests: ['news'] },
      accepted_at: '2026-05-01T10:00:00.000Z',
      accepted_by: { key_id: 'k1', su: true },
      webhook_url: 'https://hooks.example.com/beams',
      delivery: null,
      webhooks: [{ event_type: 'v1.PublishAccepted', attempts: 1, outcome: 'retrying', status: 500, error: null, attempted_at: '2026-05-01T10:00:01.000Z', next_attempt_at: '2026-05-01T10:00:05.000Z' }],
    });
    const delivered = recorded({ type: 'BeamsPublishDelivered', data: { devices: 3, delivered: 2, failed: 0, removed: 1, delivered_at: '2026-05-01T10:00:02.000Z' } });
    const report = publishReport([accepted, retrying, delivered, attempt({ attempt: 2 }), attempt({ event_type: 'v1.PublishToInterestsAttempt', event_id: 'p1.finished' })]);
    expect(report).toMatchObject({ status: 'delivered', delivery: { devices: 3, delivered: 2, failed: 0, removed: 1, delivered_at: '2026-05-01T10:00:02.000Z' } });
    expect(report!.webhooks.map((w) => [w.event_type, w.attempts, w.outcome])).toEqual([
      ['v1.PublishAccepted', 2, 'delivered'],
      ['v1.PublishToInterestsAttempt', 1, 'delivered'],
    ]);
  });
});
