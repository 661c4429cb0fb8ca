import { InProcessEphemeralBus } from '../../adapters/ephemeral/in-process-ephemeral-bus';
import { EphemeralBus, ephemeralChannel } from '../../shared/ports/ephemeral-bus.port';
import { PresenceState, PresenceTracker } from './presence-tracker';

const timing = { heartbeatMs: 10_000, ttlMs: 25_000, sweepMs: 2_500 };

describe('PresenceTracker', () => {
  let bus: InProcessEphemeralBus;
  let a: PresenceTracker;
  let b: PresenceTracker;

  beforeEach(() => {
    jest.useFakeTimers();
    bus = new InProcessEphemeralBus();
    // Two API processes sharing one bus, as EventStoreDB makes them; past their youth (no
    // restart grace) unless a test says otherwise.
    a = new PresenceTracker(bus, { processId: 'A', ...timing, restartGraceMs: 0 });
    b = new PresenceTracker(bus, { processId: 'B', ...timing, restartGraceMs: 0 });
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

  describe('the first answer of a watch', () => {
    /** A process that just started, with the SDK-derived restart grace (6 s by default). */
    const young = (processId: string, on: EphemeralBus = bus) => new PresenceTracker(on, { processId, ...timing });
    const started: PresenceTracker[] = [];
    afterEach(async () => {
      for (const tracker of started.splice(0)) await tracker.stop();
    });
    const start = (tracker: PresenceTracker) => (started.push(tracker), tracker);

    it('holds "offline" back while the process is young, so a user who reconnects after the watcher is never reported offline', () => {
      const c = start(young('C'));
      const bob = follow(c, 'bob'); // the watcher came back first
      jest.advanceTimersByTime(4_000);
      expect(bob.seen).toEqual([]);
      c.register('i1', 'bob'); // then bob's own client
      expect(bob.seen).toEqual(['online']);
    });

    it('says "online" at once, and "offline" for a user who really went away once the grace has passed', () => {
      const c = start(young('C'));
      c.register('i1', 'bob');
      const bob = follow(c, 'bob');
      expect(bob.seen).toEqual(['online']);
      const ann = follow(c, 'ann');
      jest.advanceTimersByTime(5_999);
      expect(ann.seen).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(ann.seen).toEqual(['offline']);
      // The youth is the process's, counted from its first presence subscription: later watches answer at once.
      expect(follow(c, 'cat').seen).toEqual(['offline']);
    });

    it('waits for the other processes to answer its query (as long again as its own query took to come back), then says "offline"', async () => {
      const slow = new LatencyBus(100);
      const grown = (processId: string) => start(new PresenceTracker(slow, { processId, ...timing, restartGraceMs: 0 }));
      const [p, q] = [grown('P'), grown('Q')];
      p.register('i1', 'bob');
      jest.advanceTimersByTime(100);
      const bob = follow(q, 'bob');
      const ann = follow(q, 'ann');
      jest.advanceTimersByTime(150);
      expect([bob.seen, ann.seen]).toEqual([[], []]); // the answers are not in yet
      jest.advanceTimersByTime(50); // P heard the query at 100 ms and its answer arrived at 200 ms
      expect(bob.seen).toEqual(['online']);
      expect(ann.seen).toEqual(['offline']);
      await Promise.all([p.stop(), q.stop()]);
      jest.advanceTimersByTime(100); // the farewells in flight arrive
      await slow.close();
    });

    it('answers within answerWaitMs when its query never comes back, and at once when it could not be sent', async () => {
      // A bus so slow that the query is not back within answerWaitMs.
      const stuck = new LatencyBus(60_000);
      const p = start(
        new PresenceTracker(stuck, { processId: 'P', ...timing, restartGraceMs: 0, answerWaitMs: 2_000 }),
      );
      const bob = follow(p, 'bob');
      jest.advanceTimersByTime(1_999);
      expect(bob.seen).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(bob.seen).toEqual(['offline']);
      await p.stop();
      jest.advanceTimersByTime(60_000); // the signals in flight arrive, to nobody
      await stuck.close();

      // A bus that refuses signals, as the EventStoreDB one does when the server is down.
      const errors: unknown[] = [];
      const broken: EphemeralBus = {
        publish: async () => Promise.reject(new Error('bus down')),
        subscribe: () => () => undefined,
        close: async () => undefined,
      };
      const q = start(
        new PresenceTracker(broken, { processId: 'Q', ...timing, restartGraceMs: 0, onError: (e) => errors.push(e) }),
      );
      const ann = follow(q, 'ann');
      for (let tick = 0; tick < 10; tick++) await Promise.resolve(); // the failed publish settles
      expect(ann.seen).toEqual(['offline']);
      expect(errors).toHaveLength(1);
    });

    it('keeps the users of a draining process online for the grace, so their reconnection elsewhere is seamless', async () => {
      const [p, q, r] = [start(young('P')), start(young('Q')), start(young('R'))];
      const bob = follow(q, 'bob');
      const ann = follow(q, 'ann');
      p.register('i1', 'bob');
      p.register('i1', 'ann');
      await p.stop(); // SIGTERM: bob reconnects to R, ann does not come back
      jest.advanceTimersByTime(3_000);
      r.register('i1', 'bob');
      jest.advanceTimersByTime(6_000 + 2_500); // the grace, and a sweep
      expect(bob.seen).toEqual(['online']);
      expect(ann.seen).toEqual(['online', 'offline']);
    });
  });
});

/** The in-process bus with a network's delay on every delivery, as between processes. */
class LatencyBus implements EphemeralBus {
  private readonly inner = new InProcessEphemeralBus();
  constructor(private readonly latencyMs: number) {}
  async publish(channel: string, message: unknown): Promise<void> {
    setTimeout(() => void this.inner.publish(channel, message), this.latencyMs);
  }
  subscribe(channel: string, listener: (message: unknown) => void): () => void {
    return this.inner.subscribe(channel, listener);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
