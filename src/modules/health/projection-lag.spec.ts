import { RecordedEvent } from '../../shared/domain/event';
import { metricsRegistry, recordProjections } from '../../shared/observability/metrics';
import { HealthSources } from './health-sources';
import { projectionHealth } from './readiness';

/** /health's sources for one projection standing at `position` while the log's head is `head`. */
const standing = (position: string, head: string): HealthSources => ({
  checkpoints: ['users_v1'],
  projectorStatus: () => null,
  roleOf: () => 'serving',
  refreshPositions: async () => () => position,
  headPosition: async () => head,
  firstEventAfter: async () => ({ recordedAt: new Date(Date.now() - 2_000).toISOString() }) as RecordedEvent,
  leases: async () => new Map(),
  parkedProjections: async () => [],
  storageFailure: () => null,
  probeStorage: async () => undefined,
  eventLogSpaceLeft: async () => null,
});

describe('projection lag in the unit the log counts in', () => {
  it('SQLite positions number events: lag_events', async () => {
    const { users_v1: lag } = await projectionHealth(standing('00000000000000000007', '00000000000000000010'));
    expect(lag).toMatchObject({ lag_events: 3 });
    expect(lag).not.toHaveProperty('lag_log_bytes');
  });

  it('EventStoreDB positions are offsets in its log: lag_log_bytes, never called events, in /health and /metrics', async () => {
    const health = await projectionHealth(standing('00000000000000001000:00000000000000001000', '00000000000000005000:00000000000000005000'));
    expect(health.users_v1).toMatchObject({ lag_log_bytes: 4000 });
    expect(health.users_v1).not.toHaveProperty('lag_events');
    recordProjections(health);
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toContain('parley_projection_lag_log_bytes{projection="users_v1",role="serving"} 4000');
    expect(metrics).not.toMatch(/^parley_projection_lag_events\{/m);
  });
});
