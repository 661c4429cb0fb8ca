import { LogPosition, RecordedEvent } from '../../../domain/event';
import { LogSubscription } from '../../../ports/event-store.port';
import { SqliteEventStore } from '../../../../adapters/event-store/sqlite/sqlite-event-store';
import { CountingStore } from '../../../../../test/support/counting-event-store';
import { openSqliteStores, SqliteStores } from '../../../../../test/support/sqlite-stores';
import { eventually } from '../../../../../test/support/waiting';
import { SharedLiveEvents } from './shared-live-events';
import { FollowHandlers, LogFollower } from './log-follower';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('SharedLiveEvents over a real SQLite event log', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  /** Every subscription a test reads, closed (and read to its end) before the log closes. */
  let reads: { subscription: LogSubscription; done: Promise<void> }[];
  beforeEach(() => {
    ({ events } = stores = openSqliteStores('parley-shared-live-'));
    reads = [];
  });
  afterEach(async () => {
    for (const { subscription } of reads) await subscription.close();
    await Promise.all(reads.map(({ done }) => done));
    await stores.close();
  });

  /** Reads a subscription in the background, noting each event's position. */
  function reading(subscription: LogSubscription): { positions: LogPosition[]; done: Promise<void> } {
    const positions: LogPosition[] = [];
    const done = (async () => {
      for await (const event of subscription) positions.push(event.position);
    })();
    reads.push({ subscription, done });
    return { positions, done };
  }

  const append = (n: number) => events.append('tick-acme.t', Array.from({ length: n }, () => ({ type: 'Tick', data: {}, metadata: meta })), 'any');
  const logPositions = async () => (await events.readAll()).map((e) => e.position);

  it('hands a follower the events the tapped subscription reads: it reads nothing of the log itself', async () => {
    await append(3);
    const shared = new SharedLiveEvents();
    const reader = reading(shared.tap(events.subscribeToAll({ after: null }), null));
    await eventually(() => reader.positions.length === 3, { what: 'the reader read the log' });
    const own = new CountingStore(events);
    const followed = shared.follow(own.events, reader.positions[2], 1_000);
    const follower = reading(followed);
    await append(5);
    await eventually(() => follower.positions.length === 5, { what: 'the follower has the new events' });

    expect(follower.positions).toEqual((await logPositions()).slice(3));
    expect(own.everyEventRead).toBe(0);
    expect(own.subscriptions).toBe(0);
    await followed.close();
    await follower.done;
  });

  it('reads the log by pages up to where the tapped events start, then takes them', async () => {
    await append(3);
    const shared = new SharedLiveEvents();
    const reader = reading(shared.tap(events.subscribeToAll({ after: null }), null));
    await eventually(() => reader.positions.length === 3, { what: 'the reader read the log' });
    const own = new CountingStore(events);
    const followed = shared.follow(own.events, null, 2);
    const follower = reading(followed);
    await eventually(() => follower.positions.length === 3, { what: 'the follower read what came before the tapped events' });
    await append(4);
    await eventually(() => follower.positions.length === 7, { what: 'the follower has the new events' });

    expect(follower.positions).toEqual(await logPositions());
    expect(own.everyEventRead).toBe(3);
    expect(own.subscriptions).toBe(0);
    await followed.close();
    await follower.done;
  });

  it('follows the log on its own while nothing is tapped, and takes the tapped events again once something is', async () => {
    const shared = new SharedLiveEvents();
    const own = new CountingStore(events);
    const followed = shared.follow(own.events, null, 1_000);
    const follower = reading(followed);
    await append(2);
    await eventually(() => follower.positions.length === 2, { what: 'the follower read the log on its own' });
    expect(own.subscriptions).toBe(1);

    // A tap from where the log stands: the follower leaves its own subscription for it.
    let tapped = shared.tap(events.subscribeToAll({ after: follower.positions[1] }), follower.positions[1]);
    let reader = reading(tapped);
    await append(3);
    await eventually(() => reader.positions.length === 3 && follower.positions.length === 5, { what: 'both have the new events' });
    const readBefore = own.everyEventRead;

    // The tap ends (its runner dropped): the follower subscribes on its own again, missing nothing.
    await tapped.close();
    await reader.done;
    await append(2);
    await eventually(() => follower.positions.length === 7, { what: 'the follower read the log on its own again' });
    expect(own.subscriptions).toBe(2);
    expect(own.everyEventRead - readBefore).toBe(2);

    // A tap again, which starts behind the follower (a runner resumes from its least advanced projection).
    tapped = shared.tap(events.subscribeToAll({ after: null }), null);
    reader = reading(tapped);
    await append(1);
    await eventually(() => reader.positions.length === 8 && follower.positions.length === 8, { what: 'both have the new event' });

    expect(follower.positions).toEqual(await logPositions());
    expect(own.subscriptions).toBe(2);
    await tapped.close();
    await followed.close();
    await Promise.all([reader.done, follower.done]);
  });

  it('lets a follower that falls too far behind go: it reads what it missed from the log', async () => {
    const shared = new SharedLiveEvents(3);
    const reader = reading(shared.tap(events.subscribeToAll({ after: null }), null));
    const own = new CountingStore(events);
    // Not read yet while the reader takes six events: only the last three are kept for it.
    const followed = shared.follow(own.events, null, 1_000);
    await append(6);
    await eventually(() => reader.positions.length === 6, { what: 'the reader read the log' });
    const follower = reading(followed);
    await eventually(() => follower.positions.length === 6, { what: 'the follower has what it missed' });
    expect(own.everyEventRead).toBeGreaterThanOrEqual(3);
    const readAfterMissing = own.everyEventRead;
    await append(2);
    await eventually(() => follower.positions.length === 8, { what: 'the follower has the new events' });

    expect(follower.positions).toEqual(await logPositions());
    expect(own.everyEventRead).toBe(readAfterMissing);
    await followed.close();
    await follower.done;
  });

  it('feeds a LogFollower live after its catch-up by pages, as its own subscription would', async () => {
    await append(4);
    const shared = new SharedLiveEvents();
    const reader = reading(shared.tap(events.subscribeToAll({ after: null }), null));
    const own = new CountingStore(events);
    const written: RecordedEvent[] = [];
    let live = false;
    const handlers: FollowHandlers = {
      pageSize: () => 2,
      interrupted: () => false,
      apply: async (batch) => void written.push(...batch),
      afterPage: async () => undefined,
      caughtUp: async () => void (live = true),
      afterLive: () => undefined,
    };
    const follower = new LogFollower(own.events, 500, 0, () => false, (after) => shared.follow(own.events, after, 2));
    const following = follower.follow(null, handlers);
    await eventually(() => live && reader.positions.length === 4, { what: 'caught up' });
    const readCatchingUp = own.everyEventRead;
    await append(3);
    await eventually(() => written.length === 7, { what: 'the live events are written' });

    expect(written.map((e) => e.position)).toEqual(await logPositions());
    expect(readCatchingUp).toBe(4);
    expect(own.everyEventRead).toBe(4);
    expect(own.subscriptions).toBe(0);
    await follower.close();
    await following;
  });
});
