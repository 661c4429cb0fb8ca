import { RecordedEvent } from '../../../shared/domain/event';
import { LogSubscription } from '../../../shared/ports/event-store.port';
import { AppendDoorbell, FeedSource, feedOfAll, feedOfStream } from './log-feeds';
import { sqlitePosition } from './positions';
import { eventually } from '../../../../test/support/waiting';

/** The subscriptions' paging and waking, over a log held in an array (the reads are LogReads' concern). */
const recorded = (seq: number, streamName: string, revision: number): RecordedEvent => ({
  id: `e-${seq}`,
  streamName,
  revision,
  position: sqlitePosition(seq),
  type: 'Counted',
  data: { seq },
  metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
  recordedAt: '2026-01-01T00:00:00.000Z',
});

/** Takes a subscription's events as they come. */
function collect(subscription: LogSubscription): { events: RecordedEvent[]; done: Promise<void> } {
  const events: RecordedEvent[] = [];
  const done = (async () => {
    for await (const event of subscription) events.push(event);
  })();
  return { events, done };
}

describe('AppendDoorbell', () => {
  it('calls every listener at each ring until it stops listening', () => {
    const doorbell = new AppendDoorbell();
    const heard: string[] = [];
    const stopA = doorbell.listen(() => heard.push('a'));
    doorbell.listen(() => heard.push('b'));
    doorbell.ring();
    stopA();
    doorbell.ring();
    expect(heard).toEqual(['a', 'b', 'b']);
  });
});

describe('log feeds', () => {
  let log: RecordedEvent[];
  /** The pages asked for: [after, limit]. */
  let asked: [number, number][];
  const subscriptions: LogSubscription[] = [];
  const open = (subscription: LogSubscription) => (subscriptions.push(subscription), collect(subscription));
  const source = (pollMs: number): FeedSource => ({ doorbell: new AppendDoorbell(), pollMs, pageSize: 2 });

  beforeEach(() => {
    log = [recorded(1, 'a', 0), recorded(2, 'b', 0), recorded(3, 'a', 1), recorded(4, 'a', 2), recorded(5, 'b', 1)];
    asked = [];
  });
  afterEach(async () => {
    for (const subscription of subscriptions.splice(0)) await subscription.close();
  });

  const readAll = (afterSeq: number, limit: number) => {
    asked.push([afterSeq, limit]);
    return log.filter((e) => Number(e.position) > afterSeq).slice(0, limit);
  };
  const readStream = (name: string) => (fromRevision: number, maxCount: number) => {
    asked.push([fromRevision, maxCount]);
    return log.filter((e) => e.streamName === name && e.revision >= fromRevision).slice(0, maxCount);
  };

  it('feeds the whole log after a position, a page of pageSize at a time, each page after the last event delivered', async () => {
    const feed = open(feedOfAll(source(60_000), 1, readAll));
    await eventually(() => feed.events.length === 4);
    expect(feed.events.map((e) => e.id)).toEqual(['e-2', 'e-3', 'e-4', 'e-5']);
    await eventually(() => asked.length === 3);
    expect(asked).toEqual([
      [1, 2],
      [3, 2],
      [5, 2],
    ]);
  });

  it('feeds one stream after a revision, a page at a time, each page from the revision after the last delivered', async () => {
    const feed = open(feedOfStream(source(60_000), 0, readStream('a')));
    await eventually(() => feed.events.length === 2);
    expect(feed.events.map((e) => [e.streamName, e.revision])).toEqual([
      ['a', 1],
      ['a', 2],
    ]);
    await eventually(() => asked.length === 2);
    expect(asked).toEqual([
      [1, 2],
      [3, 2],
    ]);
  });

  it('wakes at the doorbell for this process\'s commits, with nothing to wait for otherwise (the poll is an hour away)', async () => {
    const feeds = source(3_600_000);
    const all = open(feedOfAll(feeds, 5, readAll));
    const stream = open(feedOfStream(feeds, 1, readStream('b')));
    await eventually(() => asked.length === 2);
    log.push(recorded(6, 'b', 2));
    feeds.doorbell.ring();
    await eventually(() => all.events.length === 1 && stream.events.length === 1);
    expect([all.events[0].id, stream.events[0].id]).toEqual(['e-6', 'e-6']);
  });

  it('finds another process\'s commits by polling every pollMs, without a ring', async () => {
    const all = open(feedOfAll(source(10), 5, readAll));
    await eventually(() => asked.length >= 1);
    log.push(recorded(6, 'c', 0));
    await eventually(() => all.events.length === 1);
    expect(all.events[0].id).toBe('e-6');
  });

  it('ends, and stops listening, when closed while waiting', async () => {
    const feeds = source(3_600_000);
    const subscription = feedOfAll(feeds, 5, readAll);
    const feed = collect(subscription);
    await eventually(() => asked.length === 1);
    await subscription.close();
    await feed.done;
    const before = asked.length;
    feeds.doorbell.ring();
    expect(asked.length).toBe(before);
  });
});
