import { RecordedEvent } from '../../../domain/event';
import { SqliteEventStore } from '../../../../adapters/event-store/sqlite/sqlite-event-store';
import { openSqliteStores, SqliteStores } from '../../../../../test/support/sqlite-stores';
import { eventually } from '../../../../../test/support/waiting';
import { FollowHandlers, LogFollower } from './log-follower';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('LogFollower over a real SQLite event log', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  beforeEach(() => ({ events } = stores = openSqliteStores('parley-log-follower-')));
  afterEach(() => stores.close());

  /** Appends `n` events in one commit. */
  const append = (n: number) => events.append('tick-acme.t', Array.from({ length: n }, () => ({ type: 'Tick', data: {}, metadata: meta })), 'any');

  /** Handlers noting what the follower does, in order. */
  const noting = (pageSize = 1_000) => {
    const seen: string[] = [];
    const written: RecordedEvent[] = [];
    let live = false;
    const handlers: FollowHandlers = {
      pageSize: () => pageSize,
      interrupted: () => false,
      apply: async (batch) => {
        written.push(...batch);
        seen.push(`${live ? 'live' : 'page'} of ${batch.length}`);
      },
      afterPage: async () => void seen.push('after page'),
      caughtUp: async () => {
        live = true;
        seen.push('caught up');
      },
      afterLive: () => void seen.push('after live'),
    };
    return { seen, written, handlers, live: () => live };
  };

  it('catches up by pages of the size asked, then follows live, writing the events buffered together as one batch', async () => {
    await append(5);
    const follower = new LogFollower(events, 500);
    const { seen, written, handlers, live } = noting(2);
    const following = follower.follow(null, handlers);
    await eventually(live, { what: 'the follower caught up' });
    await append(3);
    await eventually(() => written.length === 8, { what: 'the live events are written' });
    await follower.close();
    await following;

    // The last "after live" is the close's.
    expect(seen).toEqual(['page of 2', 'after page', 'page of 2', 'after page', 'page of 1', 'after page', 'caught up', 'live of 3', 'after live', 'after live']);
    expect(written.map((e) => e.position)).toEqual((await events.readAll()).map((e) => e.position));
  });

  it('writes at most maxBatch live events at once, and reads after the position it is given', async () => {
    await append(3);
    const from = (await events.readAll())[1].position;
    const follower = new LogFollower(events, 2);
    const { seen, written, handlers, live } = noting();
    const following = follower.follow(from, handlers);
    await eventually(live, { what: 'the follower caught up' });
    await append(5);
    await eventually(() => written.length === 6, { what: 'the live events are written' });
    await follower.close();
    await following;

    expect(seen).toEqual(['page of 1', 'after page', 'caught up', 'live of 2', 'after live', 'live of 2', 'after live', 'live of 1', 'after live', 'after live']);
    expect(written[0].position > from).toBe(true);
  });

  it('with a gathering time, writes the live events of several commits as one batch, when it is full or the time is up', async () => {
    const follower = new LogFollower(events, 3, 60_000);
    const { seen, written, handlers, live } = noting();
    const following = follower.follow(null, handlers);
    await eventually(live, { what: 'the follower caught up' });
    for (let i = 0; i < 3; i++) await append(1);
    await eventually(() => written.length === 3, { what: 'the full batch is written' });
    await follower.close();
    await following;
    expect(seen).toEqual(['caught up', 'live of 3', 'after live', 'after live']);

    const quick = new LogFollower(events, 500, 20);
    const second = noting();
    const followingAgain = quick.follow((await events.readAll())[2].position, second.handlers);
    await eventually(second.live, { what: 'the follower caught up' });
    await append(1);
    await eventually(() => second.written.length === 1, { what: 'the batch is written once its time is up' });
    await quick.close();
    await followingAgain;
  });

  it('with a gathering time, writes a batch at once when an event that ends the gathering comes (a delete)', async () => {
    const follower = new LogFollower(events, 500, 60_000, (event) => event.type === 'Deleted');
    const { written, handlers, live } = noting();
    const following = follower.follow(null, handlers);
    await eventually(live, { what: 'the follower caught up' });
    await append(2);
    await events.append('tick-acme.t', [{ type: 'Deleted', data: {}, metadata: meta }], 'any');
    // Long before the minute of gathering is up.
    await eventually(() => written.length === 3, { what: 'the batch with the delete is written', timeoutMs: 10_000 });
    expect(written.map((e) => e.type)).toEqual(['Tick', 'Tick', 'Deleted']);
    await follower.close();
    await following;
  });

  it('with a gathering time, writes the batch gathering at once when hurried (a search waits for it)', async () => {
    const follower = new LogFollower(events, 500, 60_000);
    const { written, handlers, live } = noting();
    const following = follower.follow(null, handlers);
    await eventually(live, { what: 'the follower caught up' });
    await append(2);
    // Hurried until the events reached it: long before the minute of gathering is up.
    await eventually(
      () => {
        follower.hurry();
        return written.length === 2;
      },
      { what: 'the hurried batch is written', timeoutMs: 10_000 },
    );
    await follower.close();
    await following;
  });

  it('reads nothing once interrupted', async () => {
    await append(2);
    const { seen, handlers } = noting();
    await new LogFollower(events, 500).follow(null, { ...handlers, interrupted: () => true });
    expect(seen).toEqual([]);
  });

  it('rejects with the failure it is failed with', async () => {
    const follower = new LogFollower(events, 500);
    const { handlers, live } = noting();
    const following = follower.follow(null, handlers);
    await eventually(live, { what: 'the follower caught up' });
    follower.fail(new Error('lease renewal failed'));
    await expect(following).rejects.toThrow('lease renewal failed');
  });
});
