import { LRUCache } from 'lru-cache';
import { growingLru } from '../../../shared/growing-lru';
import { positionAfter, type LogPosition, type RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import type { EventStore } from '../../../shared/ports/event-store.port';

/** Events read per page of a stream. */
const PAGE = 500;

/**
 * Streams and instances whose content was destroyed, remembered with where (ids and a position
 * each, a few MB at most): a fold that ends before such a position is not kept, even if it read
 * the content before the keys went (they go just after the delete's append, or at the sweep
 * after a crash in between).
 */
const DESTROYS_REMEMBERED = 100_000;

/** A stream's state folded from its first event up to `position`, the last event folded (at `revision`). */
interface Folded<S> {
  readonly state: S;
  readonly revision: number;
  readonly position: LogPosition;
}

export interface StreamFold<S> {
  readonly initial: () => S;
  /** Pure, and never changes the state it is given (the cache hands it out again). */
  readonly evolve: (state: S, event: RecordedEvent) => S;
  /** Streams whose folds are kept (least recently used go first). */
  readonly cached: number;
  /** With `weight`: the most the kept folds weigh together. */
  readonly maxWeight?: number;
  /** What one fold counts for against `maxWeight` (at least 1). */
  readonly weight?: (state: S) => number;
}

/**
 * Streams folded up to a log position, incrementally: the fold of a stream is kept with the
 * revision and position it reached, and a lookup at a later position reads and folds only the
 * stream's events after it, so a lookup costs what changed since the last one, not the stream's
 * history (a room with thousands of members added one by one). A lookup before the kept fold (a
 * replay, a redelivery) folds from the start: state folded past the position asked is never
 * served. What is kept is opened content: tell `destroyed` when its stream's or instance's
 * content is destroyed.
 */
export class StreamFoldsAt<S> {
  private readonly folds: LRUCache<string, Folded<S>>;
  /** Where a stream (by name) or an instance (`instance:<id>`) had its content destroyed. */
  private readonly destroys = growingLru<string, LogPosition>(DESTROYS_REMEMBERED);

  constructor(
    private readonly events: EventStore,
    private readonly fold: StreamFold<S>,
  ) {
    const { weight, maxWeight } = fold;
    this.folds =
      weight && maxWeight
        ? new LRUCache<string, Folded<S>>({ max: fold.cached, maxSize: maxWeight, sizeCalculation: (f) => Math.max(1, weight(f.state)) })
        : growingLru<string, Folded<S>>(fold.cached);
  }

  /** The stream's state with its events at or before `position` folded. */
  async at(stream: string, position: LogPosition): Promise<S> {
    const kept = this.folds.get(stream);
    const from = kept && !positionAfter(kept.position, position) ? kept : null;
    let state = from ? from.state : this.fold.initial();
    let last: RecordedEvent | null = null;
    reading: for (let revision = from ? from.revision + 1 : 0; ; revision += PAGE) {
      const page = await this.events.readStream(stream, { fromRevision: revision, maxCount: PAGE });
      for (const event of page) {
        if (positionAfter(event.position, position)) break reading;
        state = this.fold.evolve(state, event);
        last = event;
      }
      if (page.length < PAGE) break;
    }
    if (last && this.keepable(stream, last.position)) this.folds.set(stream, { state, revision: last.revision, position: last.position });
    return state;
  }

  /** The content of `stream`, or of every stream of `instanceId`, was destroyed at `position`: what was kept of it from before goes. */
  destroyed(at: { stream: string } | { instanceId: string }, position: LogPosition): void {
    const key = 'stream' in at ? at.stream : `instance:${at.instanceId}`;
    const known = this.destroys.get(key);
    if (known === undefined || positionAfter(position, known)) this.destroys.set(key, position);
    if ('stream' in at) this.folds.delete(at.stream);
    else for (const stream of [...this.folds.keys()]) if (parseStreamName(stream)?.instanceId === at.instanceId) this.folds.delete(stream);
  }

  private keepable(stream: string, position: LogPosition): boolean {
    const instanceId = parseStreamName(stream)?.instanceId;
    return [this.destroys.peek(stream), instanceId === undefined ? undefined : this.destroys.peek(`instance:${instanceId}`)].every(
      (destroyedAt) => destroyedAt === undefined || !positionAfter(destroyedAt, position),
    );
  }
}
