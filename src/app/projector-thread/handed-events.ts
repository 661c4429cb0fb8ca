import type { ReportedHead } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { seqOf } from '../../adapters/event-store/sqlite/positions';
import { ForwardingEventStore } from '../../shared/application/operations/forwarding-event-store';
import { SEALED_FIELD } from '../../shared/application/operations/sealing-event-store';
import type { DataKeyRing } from '../../shared/crypto/data-key-ring';
import type { SealedFields } from '../../shared/crypto/sealed-fields';
import { LogPosition, positionAfter, RecordedEvent } from '../../shared/domain/event';
import type { EventStore, LogSubscription, SubscribeToAllOptions } from '../../shared/ports/event-store.port';
import type { ToProjectorThread } from './protocol';

/**
 * How long a live subscription waits for the events of a head the request thread reported on
 * disk to be handed over before it reads them from the log: they follow the head by a turn of
 * the request thread's event loop; a live log that does not hand them (dropped, stopped) costs
 * this much more per commit until it does again.
 */
const HANDED_WITHIN_MS = 25;
/** How long an idle subscription waits before it looks at the head again, whatever woke it (as the log's own feed polls). */
const IDLE_LOOK_MS = 500;
/** Events handed and not yet taken that one subscription keeps: one that falls further behind reads the log. */
const CAPACITY = 10_000;

/** What one live subscription has been handed and not yet taken: a run of the log, in order, with no gap. */
class HandedRun {
  private events: RecordedEvent[] = [];
  /** Index of the first event not taken. */
  private head = 0;
  /** The position just before `events[head]` (null: the log's start). */
  private after: LogPosition | null = null;
  /** Whether anything was handed since it began. */
  private started = false;
  private wake: (() => void) | null = null;

  /** Events of the log after position `after`, in order: they continue the run, or start another. */
  offer(after: LogPosition | null, events: readonly RecordedEvent[]): void {
    const end = this.head < this.events.length ? this.events[this.events.length - 1].position : this.after;
    if (!this.started || after !== end) {
      this.started = true;
      this.events = [...events];
      this.head = 0;
      this.after = after;
    } else {
      if (this.head === this.events.length) {
        this.events = [];
        this.head = 0;
      }
      for (const event of events) this.events.push(event);
    }
    const over = this.events.length - this.head - CAPACITY;
    if (over > 0) {
      this.head += over;
      this.after = this.events[this.head - 1].position;
    }
    this.ring();
  }

  /**
   * The events of the run after `last`: null when the run starts after it (a gap to read from
   * the log), empty when it holds nothing after it yet.
   */
  takeAfter(last: LogPosition | null): RecordedEvent[] | null {
    if (!this.started) return [];
    while (this.head < this.events.length && !positionAfter(this.events[this.head].position, last)) this.after = this.events[this.head++].position;
    if (this.after !== null && positionAfter(this.after, last)) return null;
    const taken = this.head === 0 ? this.events : this.events.slice(this.head);
    if (taken.length) this.after = taken[taken.length - 1].position;
    this.events = [];
    this.head = 0;
    return taken;
  }

  /** Resolves at the next offer, move of the head or close, or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.ring(), ms);
      this.wake = () => {
        clearTimeout(timer);
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
 * The projector thread's log as the embedded server's request thread hands it over: the events
 * its live log read back from each commit (durable, in order), with the plaintexts it sealed
 * them from, which the key ring answers once (DataKeyRing.rememberHanded) so that the sealing
 * log above opens them without a key. A live subscription (`subscribeToAll`) takes them rather
 * than reading the log, and reads the log wherever they do not continue what it yielded (its
 * start, a gap, a thread restarted, another process's commits seen late) or do not come (the
 * head on disk moved `HANDED_WITHIN_MS` ago and nothing covers it; before anything was handed:
 * at once). Every other read is the log's.
 *
 * A destroy of keys forgets their plaintexts (the ring's `forgetDestroyed`): the request thread
 * hands them over before it tells of the destroy, so an event folded after it opens as it would
 * from the log, erased.
 */
export class HandedEvents extends ForwardingEventStore {
  private readonly runs = new Set<HandedRun>();
  /** Whether the request thread hands events over: until then, a move of the head is read from the log at once. */
  private handing = false;

  constructor(
    inner: EventStore,
    private readonly head: ReportedHead,
    private readonly keys: DataKeyRing,
    private readonly pageSize = 500,
  ) {
    super(inner);
    head.onMoved(() => {
      for (const run of this.runs) run.ring();
    });
  }

  /** A `handed` message of the request thread. */
  receive({ after, events, plaintexts }: Extract<ToProjectorThread, { kind: 'handed' }>): void {
    this.handing = true;
    plaintexts.forEach((plaintext, i) => {
      if (plaintext === null) return;
      const sealed = (events[i].data as Record<string, SealedFields>)[SEALED_FIELD];
      this.keys.rememberHanded(sealed.k, sealed.ct, plaintext);
    });
    for (const run of this.runs) run.offer(after, events);
  }

  override subscribeToAll(options: SubscribeToAllOptions = {}): LogSubscription {
    return options.filter ? super.subscribeToAll(options) : this.follow(options.after ?? null);
  }

  private follow(after: LogPosition | null): LogSubscription {
    const run = new HandedRun();
    this.runs.add(run);
    let closed = false;
    const handed = this;
    return {
      async *[Symbol.asyncIterator]() {
        let last = after;
        /** Since when the head on disk is past `last` with nothing handed to cover it. */
        let behindSince: number | null = null;
        try {
          while (!closed) {
            const taken = run.takeAfter(last);
            const behind = handed.head.through > seqOf(last);
            if (taken === null || (taken.length === 0 && behind && (!handed.handing || (behindSince !== null && Date.now() - behindSince >= HANDED_WITHIN_MS)))) {
              behindSince = null;
              const page = await handed.inner.readAll({ after: last, maxCount: handed.pageSize });
              for (const event of page) {
                if (closed) return;
                last = event.position;
                yield event;
              }
              // A run handed after what the log shows yet (the head's word comes a moment later).
              if (page.length === 0) await run.changed(HANDED_WITHIN_MS);
              continue;
            }
            if (taken.length) {
              behindSince = null;
              for (const event of taken) {
                if (closed) return;
                last = event.position;
                yield event;
              }
              continue;
            }
            if (!behind) behindSince = null;
            else behindSince ??= Date.now();
            await run.changed(behindSince === null ? IDLE_LOOK_MS : Math.max(0, behindSince + HANDED_WITHIN_MS - Date.now()));
          }
        } finally {
          handed.runs.delete(run);
        }
      },
      async close() {
        closed = true;
        handed.runs.delete(run);
        run.ring();
      },
    };
  }
}
