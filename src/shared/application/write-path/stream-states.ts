import { growingLru } from '../../growing-lru';
import { Decider } from '../../domain/decider';
import { DomainEvent, LogPosition, RecordedEvent } from '../../domain/event';
import { EventStore, ReadStreamOptions } from '../../ports/event-store.port';
import { EventLoopTurn } from './event-loop-turn';
import { InstanceEpochs } from './instance-epochs';
import { newestFirst } from './stream-position-search';
import { eventLogUnreadable } from './write-errors';

export interface Folded<S> {
  readonly state: S;
  /** Revision of the last event folded, or -1 when the stream does not exist. */
  readonly revision: number;
  /** The instance's wipe position the state was folded under: events at or before it are absent. */
  readonly epoch?: LogPosition | null;
  /** The turn of the event loop in which the stream was last read to its end (see `StreamStates`). */
  readonly readIn?: object;
  /** The stream's version (`EventStore.streamVersion`) taken before that read, when the store tells one. */
  readonly version?: string;
}

/**
 * Folded states kept, by stream (least recently used go first). States are small: deciders
 * keep what decisions need (a timeline its last id, a room its settings and members).
 */
export const STATE_CACHE_ENTRIES = 10_000;
/** Events read per step when a stream is read backwards to where its state starts. */
const TAIL_PAGE = 16;

/**
 * Streams' current states as the write side reads them: folded by their decider, cached by
 * stream and revision (LRU), so a hot stream is read on from where the cache left it rather than
 * from its start, or backwards to where its state starts (`foldsFrom`) when it is not cached.
 * Events at or before the instance's wipe count for the revision but are not folded.
 *
 * The turn-validity invariant. A state is served without reading when its stream was read to
 * its end in the current turn of the event loop (`EventLoopTurn`), and read again otherwise. A
 * send loads the sender, the room and the timeline, some twice, and concurrent sends to one room
 * load the same streams: within a turn they cost one read each. What makes that safe:
 * - every append by this process ends the turn (`endTurn`), so this process never serves a
 *   state older than its own writes;
 * - another process's append shows from the next turn at the latest, and a state served before
 *   it carries the revision it was read at: a decision made on it fails on its expected revision
 *   and is made again on a fresh read, so a stale state can delay a change, never overwrite one;
 * - a wipe recorded since the state was folded discards it, in the same turn.
 *
 * Across turns, a store that can tell whether anything was appended to the stream since
 * (`streamVersion`: the embedded log's own commits to it, and SQLite's `data_version` for every
 * other connection's) spares the read: a state stamped with the version taken before its read
 * is whole while that version is unchanged. The sender's and the room's streams, which a send
 * loads and does not append to, were read again at every turn.
 */
export class StreamStates {
  private readonly cache = growingLru<string, Folded<unknown>>(STATE_CACHE_ENTRIES);

  constructor(
    private readonly events: EventStore,
    private readonly epochs?: InstanceEpochs,
    private readonly turn = new EventLoopTurn(),
  ) {}

  /** The stream's current state; a failed read answers 503 "nothing was changed". */
  async load<S, E extends DomainEvent>(stream: string, decider: Decider<S, unknown, E>): Promise<Folded<S>> {
    const known = this.epochs?.knownWipedAtFor(stream);
    const epoch = known !== undefined ? known : await this.wipedAt(stream);
    let cached = this.cache.get(stream) as Folded<S> | undefined;
    if (cached && (cached.epoch ?? null) !== epoch) cached = undefined; // wiped since: fold afresh
    if (cached && cached.readIn === this.turn.current()) return cached;
    // Taken before the read: whatever is appended after it changes it.
    const version = this.events.streamVersion?.(stream);
    if (cached && version !== undefined && cached.version === version) return cached;
    let state = cached ? cached.state : epoch !== null && decider.wipedState ? decider.wipedState() : decider.initialState();
    let revision = cached ? cached.revision : -1;
    const newer = cached || !decider.foldsFrom ? await this.readStream(stream, { fromRevision: revision + 1 }) : await this.tail(stream, decider.foldsFrom, epoch);
    for (const event of newer) {
      // Wiped events still count for the revision the next append expects.
      if (epoch === null || event.position > epoch) state = decider.evolve(state, event as unknown as E);
      revision = event.revision;
    }
    const folded = { state, revision, epoch, readIn: this.turn.current(), version };
    this.cache.set(stream, folded);
    return folded;
  }

  /**
   * The state this process's append left at `revision`: the next load reads on from it (it is
   * not marked read in a turn, so whatever another process appended after it is read too),
   * unless the store stamped the append with the stream's version and that is still the version.
   */
  appended<S>(stream: string, state: S, revision: number, epoch: LogPosition | null | undefined, version?: string): void {
    this.cache.set(stream, { state, revision, epoch, version });
  }

  /** An append was made or tried: what was read so far may be out of date, every stream is read again before it is used. */
  endTurn(): void {
    this.turn.end();
  }

  /** Events of a stream as the write side reads them: a failed read answers 503 "nothing was changed". */
  async readStream(stream: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    try {
      return await this.events.readStream(stream, options);
    } catch (error) {
      throw eventLogUnreadable(error);
    }
  }

  /** The newest events of a stream back to (and including) the newest one `foldsFrom` accepts, oldest first. */
  private async tail<E extends DomainEvent>(stream: string, foldsFrom: (event: E) => boolean, epoch: LogPosition | null): Promise<RecordedEvent[]> {
    const read: RecordedEvent[] = [];
    for await (const event of newestFirst((s, options) => this.readStream(s, options), stream, TAIL_PAGE)) {
      read.push(event);
      // A wiped event ends the state as a start would (it is kept for its revision, not folded).
      if ((epoch !== null && event.position <= epoch) || foldsFrom(event as unknown as E)) break;
    }
    return read.reverse();
  }

  /** The wipe position of the stream's instance (null: never wiped); a failed read answers 503 "nothing was changed". */
  private async wipedAt(stream: string): Promise<LogPosition | null> {
    if (!this.epochs) return null;
    try {
      return await this.epochs.wipedAtFor(stream);
    } catch (error) {
      throw eventLogUnreadable(error);
    }
  }
}
