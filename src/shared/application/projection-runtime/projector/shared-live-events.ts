import { LogPosition, positionAfter, RecordedEvent } from '../../../domain/event';
import { EventStore, LogSubscription } from '../../../ports/event-store.port';

/**
 * How many events a following runner may be behind the one it follows before its share of them
 * is let go (it then reads the log for what it missed): a runner folding in the background
 * (message search) takes each event as it comes, except while it writes a batch, when a busy
 * second of sends piles up a few hundred.
 */
const DEFAULT_CAPACITY = 10_000;

/** What one following subscription has been handed and not yet taken: a run of the log, in order, with no gap. */
class Share {
  private events: RecordedEvent[] = [];
  /** Index of the first event not taken. */
  private head = 0;
  /** The position just before `events[head]` in the log (null: its start). */
  after: LogPosition | null;
  private wake: (() => void) | null = null;

  constructor(
    after: LogPosition | null,
    private readonly capacity: number,
  ) {
    this.after = after;
  }

  /** The log's next event after the run (`previous`: the position the run ends at). */
  offer(event: RecordedEvent, previous: LogPosition | null): void {
    if (this.head === this.events.length) this.restart(previous);
    this.events.push(event);
    if (this.events.length - this.head > this.capacity) this.after = this.events[this.head++].position;
    if (this.head > 1_024 && this.head * 2 > this.events.length) this.restart(this.after, this.events.slice(this.head));
    this.ring();
  }

  /** Drops the run: it continues from `after`. */
  restart(after: LogPosition | null, events: RecordedEvent[] = []): void {
    this.events = events;
    this.head = 0;
    this.after = after;
  }

  /**
   * The events of the run after `last`: null when the run starts after it (a gap the follower
   * reads from the log), empty when the run holds nothing after it yet.
   */
  takeAfter(last: LogPosition | null): RecordedEvent[] | null {
    while (this.head < this.events.length && !positionAfter(this.events[this.head].position, last)) this.after = this.events[this.head++].position;
    if (this.after !== null && positionAfter(this.after, last)) return null;
    const taken = this.events.slice(this.head);
    this.restart(taken.length ? taken[taken.length - 1].position : this.after);
    return taken;
  }

  /** Resolves at the next offer, restart of the tap, close, or after `ms` at the latest. */
  changed(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? null : setTimeout(() => this.ring(), ms);
      this.wake = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
    });
  }

  ring(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/**
 * The live events one projector runner reads (already read from the log and opened: sealed
 * fields in plaintext), handed to the other runners of the process that follow the same log
 * (message search's, folded in the background), so that the log is read and opened once per
 * event rather than once per runner.
 *
 * The runner that reads them (`tap`) may stop following live at any time (a drop, a refollow,
 * leases held elsewhere, not yet caught up): a follower (`follow`) then reads the log with a
 * subscription of its own, and comes back to the tapped events once they are live again. A
 * follower behind the tapped run (at its start, after its own catch-up, or let go when it fell
 * `capacity` events behind) reads the log by pages up to where the run starts. It never
 * receives an event twice or misses one: the tapped run is a run of the log with no gap (a
 * catch-up-then-live subscription's), and the follower takes from it only what follows the last
 * event it yielded.
 */
export class SharedLiveEvents {
  /** Whether a tapped subscription reads the log live now. */
  private live = false;
  /** Counts taps, so that the close of a replaced one ends nothing. */
  private generation = 0;
  /** The position of the last event tapped (or the position its subscription started after). */
  private readTo: LogPosition | null = null;
  private readonly shares = new Set<Share>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  /** The live subscription of the runner that reads the log, handing each event it yields to the followers. */
  tap(subscription: LogSubscription, after: LogPosition | null): LogSubscription {
    const generation = ++this.generation;
    this.live = true;
    this.readTo = after;
    for (const share of this.shares) {
      share.restart(after);
      share.ring();
    }
    const end = () => {
      if (generation !== this.generation || !this.live) return;
      this.live = false;
      for (const share of this.shares) {
        share.restart(null);
        share.ring();
      }
    };
    const received = (event: RecordedEvent) => {
      if (generation !== this.generation) return;
      const previous = this.readTo;
      this.readTo = event.position;
      for (const share of this.shares) share.offer(event, previous);
    };
    // The subscription's own iterator, each result seen on its way (no generator of its own: the
    // serving runner takes every event of the log through it).
    return {
      [Symbol.asyncIterator]() {
        const iterator = subscription[Symbol.asyncIterator]();
        const seen = (result: IteratorResult<RecordedEvent>) => {
          if (result.done) end();
          else received(result.value);
          return result;
        };
        const ended = (error: unknown) => {
          end();
          throw error;
        };
        return {
          next: () => iterator.next().then(seen, ended),
          return: async (value?: unknown) => {
            end();
            return (await iterator.return?.(value)) ?? { done: true, value: undefined };
          },
        };
      },
      async close() {
        end();
        await subscription.close();
      },
    };
  }

  /**
   * A catch-up-then-live subscription of the log after `after`, as `events.subscribeToAll`
   * gives, fed by the tapped events while they cover it; `pageSize` events per read of the log
   * where they do not.
   */
  follow(events: EventStore, after: LogPosition | null, pageSize: number): LogSubscription {
    // Handed the tapped events from now on, whenever it is first read.
    const share = new Share(this.readTo, this.capacity);
    this.shares.add(share);
    let closed = false;
    let own: LogSubscription | null = null;
    const relay = this;
    return {
      async *[Symbol.asyncIterator]() {
        let last = after;
        try {
          while (!closed) {
            if (!relay.live) {
              // Nobody reads the log live: a subscription of its own, until somebody does.
              own = events.subscribeToAll({ after: last });
              const iterator = own[Symbol.asyncIterator]();
              let pending = iterator.next();
              for (;;) {
                const next = await Promise.race([pending, share.changed()]);
                if (next === undefined) {
                  if (!relay.live && !closed) continue;
                  await own.close();
                  // Closed here: a failure it settles with now is its cancellation's, not the log's.
                  const settled = await pending.catch((): IteratorResult<RecordedEvent> => ({ done: true, value: undefined }));
                  if (!closed && !settled.done && positionAfter(settled.value.position, last)) {
                    last = settled.value.position;
                    yield settled.value;
                  }
                  break;
                }
                if (next.done) return;
                last = next.value.position;
                yield next.value;
                pending = iterator.next();
              }
              own = null;
              continue;
            }
            const taken = share.takeAfter(last);
            if (taken === null) {
              // Behind the tapped run: the log up to where it starts.
              const page = await events.readAll({ after: last, maxCount: pageSize });
              for (const event of page) {
                if (closed) return;
                last = event.position;
                yield event;
              }
              // A run starts after a position the log does not show yet (cannot be, but a wait is bounded).
              if (page.length === 0) await share.changed(100);
              continue;
            }
            for (const event of taken) {
              if (closed) return;
              last = event.position;
              yield event;
            }
            if (taken.length === 0) await share.changed();
          }
        } finally {
          relay.shares.delete(share);
          await own?.close();
        }
      },
      async close() {
        closed = true;
        relay.shares.delete(share);
        share.ring();
        await own?.close();
      },
    };
  }
}

/** A runner's part in sharing live events: it reads the log and hands them on, or takes them from the one that does. */
export interface LiveEventsSharing {
  readonly shared: SharedLiveEvents;
  readonly as: 'reader' | 'follower';
}

/** How a runner subscribes to the log live (LogFollower's `subscribeLive`): on its own, or sharing (`pageSize`: a follower's reads of the log). */
export function liveSubscriber(events: EventStore, sharing: LiveEventsSharing | undefined, pageSize: number): (after: LogPosition | null) => LogSubscription {
  if (sharing?.as === 'reader') return (after) => sharing.shared.tap(events.subscribeToAll({ after }), after);
  if (sharing?.as === 'follower') return (after) => sharing.shared.follow(events, after, pageSize);
  return (after) => events.subscribeToAll({ after });
}
