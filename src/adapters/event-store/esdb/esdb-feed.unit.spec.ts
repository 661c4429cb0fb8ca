import type { ReadableSubscription } from '@eventstore/db-client';
import { PassThrough } from 'node:stream';
import { RecordedEvent } from '../../../shared/domain/event';
import { LogSubscription } from '../../../shared/ports/event-store.port';
import { EsdbTimeoutError } from '../../shared/esdb-client';
import { EsdbFeed, EsdbSubscriptionEndedError } from './esdb-feed';

/**
 * Stands in for the client's subscription: a Readable of items with unsubscribe(), confirmed
 * by the "server" right after it is opened unless told otherwise; it counts the reads asked of
 * it. `hangs`: like a call on a hung connection, cancelling it neither ends nor fails a read.
 */
class FakeSubscription extends PassThrough {
  unsubscribed = false;
  cancelled = false;
  reads = 0;
  constructor(readonly options: { confirms?: boolean; hangs?: boolean } = {}) {
    super({ objectMode: true });
  }
  get confirms(): boolean {
    return this.options.confirms ?? true;
  }
  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
    if (this.options.hangs) await new Promise(() => undefined);
  }
  override destroy(error?: Error): this {
    this.cancelled = true;
    return this.options.hangs ? this : super.destroy(error);
  }
  override [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    const inner = super[Symbol.asyncIterator]();
    const counted: AsyncIterableIterator<unknown> = {
      next: () => {
        this.reads++;
        return inner.next();
      },
      return: (value) => inner.return!(value),
      [Symbol.asyncIterator]: () => counted,
    };
    return counted;
  }
}

/** Polls `condition` until it holds (or fails the test after 5 s). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const event = (n: number): RecordedEvent => ({
  id: `e${n}`,
  streamName: 'room-1',
  revision: n,
  position: String(n).padStart(20, '0'),
  type: 'MessageSent',
  data: { n },
  metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
  recordedAt: '2026-01-01T00:00:00.000Z',
});

/** A feed over `subscription` whose items are numbers; odd ones are dropped, as filtered-out events are. */
function feedOf(subscription: FakeSubscription, timeoutMs = 60_000) {
  const closed: LogSubscription[] = [];
  const feed = new EsdbFeed<number>(
    () => {
      if (subscription.confirms) process.nextTick(() => subscription.emit('confirmation'));
      return subscription as unknown as ReadableSubscription<number>;
    },
    () => (n) => (n % 2 === 0 ? event(n) : null),
    timeoutMs,
    'the test subscription',
    (f) => closed.push(f),
  );
  return { feed, closed };
}

describe('EventStoreDB subscription feeds', () => {
  it('yield what the acceptor accepts, in order', async () => {
    const subscription = new FakeSubscription();
    const { feed } = feedOf(subscription);
    for (const n of [0, 1, 2, 3, 4]) subscription.write(n);
    const seen: number[] = [];
    for await (const e of feed) {
      seen.push(e.revision);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([0, 2, 4]);
    expect(subscription.unsubscribed).toBe(true);
  });

  it('throw when the server ends the subscription, so that the consumer resubscribes from its checkpoint', async () => {
    const subscription = new FakeSubscription();
    const { feed, closed } = feedOf(subscription);
    subscription.end(0);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const e of feed) seen.push(e.revision);
      })(),
    ).rejects.toThrow(EsdbSubscriptionEndedError);
    expect(seen).toEqual([0]);
    expect(closed).toEqual([feed]);
  });

  it('end a pending wait for the next event at once when closed, even on a connection that hangs, without an error', async () => {
    const subscription = new FakeSubscription({ hangs: true });
    const { feed, closed } = feedOf(subscription);
    subscription.write(0);
    const seen: number[] = [];
    let ended = false;
    const consumed = (async () => {
      for await (const e of feed) seen.push(e.revision);
      ended = true;
    })();
    // The first event is in, and the feed waits for a second that never comes.
    await until(() => seen.length === 1 && subscription.reads === 2);
    await feed.close();
    await until(() => ended);
    await expect(consumed).resolves.toBeUndefined();
    expect(seen).toEqual([0]);
    expect(closed).toEqual([feed]);
    expect(subscription.unsubscribed).toBe(true);
    expect(subscription.cancelled).toBe(true);
  });

  it('fail a subscription the server never confirms', async () => {
    const subscription = new FakeSubscription({ confirms: false }); // a hung connection: no confirmation, no events
    const { feed } = feedOf(subscription, 20);
    await expect(
      (async () => {
        for await (const e of feed) void e;
      })(),
    ).rejects.toThrow(EsdbTimeoutError);
  });

  it('yield nothing once closed before it was iterated', async () => {
    const subscription = new FakeSubscription();
    const { feed } = feedOf(subscription);
    subscription.write(0);
    await feed.close();
    const seen: RecordedEvent[] = [];
    for await (const e of feed) seen.push(e);
    expect(seen).toEqual([]);
  });
});
