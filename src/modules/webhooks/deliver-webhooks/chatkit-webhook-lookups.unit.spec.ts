import { InProcessEphemeralBus } from '../../../adapters/ephemeral/in-process-ephemeral-bus';
import type { Clock } from '../../../shared/domain/clock';
import { PresenceTracker } from '../../presence/presence-tracker';
import { ChatkitWebhookLookups, OFFLINE_PRESENCE_WINDOW_MS, offlineNowFrom } from './chatkit-webhook-lookups';

describe('ChatkitWebhookLookups: who was offline for a message', () => {
  const timing = { heartbeatMs: 10_000, ttlMs: 25_000, sweepMs: 2_500, restartGraceMs: 0, answerWaitMs: 50 };
  let bus: InProcessEphemeralBus;
  let api: PresenceTracker;
  let worker: PresenceTracker;
  let now: Date;
  const clock: Clock = { now: () => now };

  beforeEach(() => {
    bus = new InProcessEphemeralBus();
    // The user's register subscription is open in an API process; the worker delivering is another process.
    api = new PresenceTracker(bus, { processId: 'api', ...timing });
    worker = new PresenceTracker(bus, { processId: 'worker', ...timing });
    now = new Date('2026-03-01T10:00:02.000Z');
  });

  afterEach(async () => {
    await api.stop();
    await worker.stop();
    await bus.close();
  });

  const lookups = () =>
    new ChatkitWebhookLookups({ events: null as never, sentMessages: null as never, offlineNow: offlineNowFrom(worker), attachment: null as never, clock }).at('0');

  it('asks presence across processes, for a message sent moments ago: the members not online', async () => {
    api.register('i1', 'ben');
    const offline = await lookups().offlineUserIds('i1', ['ben', 'cat'], '2026-03-01T10:00:01.000Z');
    expect(offline).toEqual(['cat']);
  });

  it('says it does not know (null) for a message sent longer ago than presence tells anything about (a late delivery, a replay)', async () => {
    api.register('i1', 'ben');
    const sentAt = new Date(now.getTime() - OFFLINE_PRESENCE_WINDOW_MS - 1).toISOString();
    expect(await lookups().offlineUserIds('i1', ['ben', 'cat'], sentAt)).toBeNull();
  });
});
