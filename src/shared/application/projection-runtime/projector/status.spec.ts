import { RecordedEvent } from '../../../domain/event';
import { projectionStatus, RunCounts, StatusFacts } from './status';

const failing: RecordedEvent = {
  id: 'e9',
  streamName: 'boom-acme.b',
  revision: 0,
  position: '00000000000000000009',
  type: 'Boom',
  data: {},
  metadata: { occurred_at: 't' },
  recordedAt: 't',
};
const facts = (more: Partial<StatusFacts> = {}): StatusFacts => ({
  name: 'fragile_v1',
  position: '00000000000000000008',
  held: true,
  dropped: null,
  maxEventAttempts: 3,
  ...more,
});
const failedEvent = { position: failing.position, type: 'Boom', stream: 'boom-acme.b' };

describe('projection status', () => {
  it('is running where held, waiting for the lease elsewhere', () => {
    expect(projectionStatus(facts())).toEqual({ name: 'fragile_v1', state: 'running', position: '00000000000000000008' });
    expect(projectionStatus(facts({ held: false, position: null }))).toEqual({ name: 'fragile_v1', state: 'waiting_for_lease', position: null });
  });

  it('says parked before anything else, then dropped, then retrying (of a held one only)', () => {
    const parked = { error: 'malformed', event: failing };
    const retrying = { error: 'malformed', event: failing, attempts: 1, at: 0 };
    expect(projectionStatus(facts({ parked, dropped: 'disk full', retrying }))).toEqual({
      name: 'fragile_v1',
      state: 'parked',
      position: '00000000000000000008',
      error: 'malformed',
      failedEvent,
    });
    expect(projectionStatus(facts({ dropped: 'disk full', retrying }))).toMatchObject({ state: 'dropped', error: 'disk full' });
    expect(projectionStatus(facts({ retrying }))).toEqual({
      name: 'fragile_v1',
      state: 'retrying',
      position: '00000000000000000008',
      error: 'malformed',
      failedEvent,
      attempts: { made: 1, max: 3 },
    });
    expect(projectionStatus(facts({ retrying, held: false }))).toMatchObject({ state: 'waiting_for_lease' });
  });
});

describe('run counts', () => {
  it('count events read and, per projection, what it folded, as copies', () => {
    const counts = new RunCounts();
    counts.read(10);
    counts.read(5);
    counts.of('users_v1').events += 3;
    counts.of('users_v1').documents += 2;
    const stats = counts.stats();
    expect(stats).toEqual({ eventsRead: 15, projections: { users_v1: { events: 3, documents: 2 } } });
    counts.of('users_v1').events++;
    expect(stats.projections.users_v1.events).toBe(3);
  });
});
