import { InProcessEphemeralBus } from '../../adapters/ephemeral/in-process-ephemeral-bus';
import { ephemeralChannel } from '../../shared/ports/ephemeral-bus.port';
import { PresenceState, PresenceTracker } from './presence-tracker';

describe('PresenceTracker', () => {
  let bus: InProcessEphemeralBus;
  let a: PresenceTracker;
  let b: PresenceTracker;

  beforeEach(() => {
    jest.useFakeTimers();
    bus = new InProcessEphemeralBus();
    // Two API processes sharing one bus, as EventStoreDB makes them.
    a = new PresenceTracker(bus, { processId: 'A', heartbeatMs: 10_000, ttlMs: 25_000, sweepMs: 2_500 });
    b = new PresenceTracker(bus, { processId: 'B', heartbeatMs: 10_000, ttlMs: 25_000, sweepMs: 2_500 });
  });

  afterEach(async () => {
    await a.stop();
    await b.stop();
    await bus.close();
    expect(jest.getTimerCount()).toBe(0);
    jest.useRealTimers();
  });

  const follow = (tracker: PresenceTracker, user: string) => {
    const seen: PresenceState[] = [];
    const watch = tracker.watch('i1', user, (s) => seen.push(s));
    seen.push(watch.state);
    return { seen, stop: () => watch.stop() };
  };

  it('is online while a register subscription is open in this process', () => {
    const bob = follow(a, 'bob');
    expect(bob.seen).toEqual(['offline']);
    const release = a.register('i1', 'bob');
    const again = a.register('i1', 'bob');
    expect(a.stateOf('i1', 'bob')).toBe('online');
    release();
    release(); // a second release changes nothing
    expect(a.stateOf('i1', 'bob')).toBe('online');
    again();
    expect(bob.seen).toEqual(['offline', 'online', 'offline']);
    bob.stop();
    expect(jest.getTimerCount()).toBe(0); // nobody followed: no timers left
  });

  it('sees registrations made in another process, and their end', () => {
    const bob = follow(b, 'bob');
    const release = a.register('i1', 'bob');
    expect(bob.seen).toEqual(['offline', 'online']);
    release();
    expect(bob.seen).toEqual(['offline', 'online', 'offline']);
  });

  it('learns at once what another process already holds when it starts watching', () => {
    const release = a.register('i1', 'bob');
    const bob = follow(b, 'bob');
    expect(bob.seen).toEqual(['online']);
    release();
    expect(bob.seen).toEqual(['online', 'offline']);
  });

  it('stays online while any process holds the user', () => {
    const bob = follow(b, 'bob');
    const inA = a.register('i1', 'bob');
    const inB = b.register('i1', 'bob');
    inB();
    expect(b.stateOf('i1', 'bob')).toBe('online');
    inA();
    expect(bob.seen).toEqual(['offline', 'online', 'offline']);
  });

  it('keeps a remote user online through heartbeats and drops them when a process falls silent', () => {
    const bob = follow(b, 'bob');
    a.register('i1', 'bob');
    jest.advanceTimersByTime(60_000);
    expect(bob.seen).toEqual(['offline', 'online']);

    // Process A dies without a word: its heartbeats stop reaching the bus.
    const publish = bus.publish.bind(bus);
    jest.spyOn(bus, 'publish').mockImplementation(async (channel, message) =>
      (message as { process_id?: string }).process_id === 'A' ? undefined : publish(channel, message),
    );
    jest.advanceTimersByTime(20_000);
    expect(b.stateOf('i1', 'bob')).toBe('online'); // the last heartbeat is younger than 25 s
    jest.advanceTimersByTime(10_000);
    expect(bob.seen).toEqual(['offline', 'online', 'offline']);
  });

  it('says offline for its registered users when it stops', async () => {
    const bob = follow(b, 'bob');
    a.register('i1', 'bob');
    await a.stop();
    expect(bob.seen).toEqual(['offline', 'online', 'offline']);
  });

  it('keeps users and instances apart, and ignores foreign messages on the channel', async () => {
    const bob = follow(b, 'bob');
    a.register('i2', 'bob');
    a.register('i1', 'ann');
    await bus.publish(ephemeralChannel('presence', 'i1', 'bob'), { hello: 'world' });
    await bus.publish(ephemeralChannel('presence', 'i1', 'bob'), { process_id: 'X', user_id: 'bob' });
    expect(bob.seen).toEqual(['offline']);
  });
});
