import { Inject, Injectable, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Decider } from '../../domain/decider';
import { conflict, DomainError } from '../../domain/errors';
import { DomainEvent, EventMetadata, LogPosition, RecordedEvent } from '../../domain/event';
import {
  AppendResult,
  EVENT_STORE,
  EventStore,
  EventStoreUnavailableError,
  AppendOutcomeUnknownError,
  AppendTooLargeError,
  EventToAppend,
  ExpectedRevision,
  ReadStreamOptions,
  WrongExpectedRevisionError,
  appendSize,
  newEventId,
} from '../../ports/event-store.port';
import { INSTANCE_EPOCHS, InstanceEpochs } from './instance-epochs';
import { AwaitedProjections, READ_YOUR_WRITES, ReadYourWrites } from './read-your-writes';
import { newestFirst } from './stream-position-search';
import { requestIdOf } from '../../observability/request-context';
import { recordAppend } from '../../observability/metrics';

interface Folded<S> {
  readonly state: S;
  /** Revision of the last event folded, or -1 when the stream does not exist. */
  readonly revision: number;
  /** The instance's wipe position the state was folded under: events at or before it are absent. */
  readonly epoch?: LogPosition | null;
  /** The turn of the event loop in which the stream was last read to its end (see `turn`). */
  readonly readIn?: object;
}

export interface CommandOutcome<S, E> {
  readonly state: S;
  readonly events: E[];
  /** Where the new events landed, or null when the command decided nothing. */
  readonly position: LogPosition | null;
}

export interface RunOptions {
  /**
   * Checkpoint names (`checkpointName(definition)`, e.g. `messages_v1`) of the projections
   * that reads of the written entity need: the command answers once those reflect it.
   * Omitted: the projections that fold the events the command appended (the read models it
   * changed), so a projection that is behind or parked holds up only the writes it shows.
   * Empty: as soon as the append is durable, for internal writes no read depends on (id
   * reservations).
   */
  readonly awaitProjections?: readonly string[];
}

const MAX_ATTEMPTS = 4;
/**
 * Folded states kept, by stream (least recently used go first). States are small: deciders
 * keep what decisions need (a timeline its last id, a room its settings and members).
 */
export const STATE_CACHE_ENTRIES = 10_000;
/**
 * Most commands of one stream decided and appended together. Their events also stay under the
 * store's `maxAppendBytes` (EventStoreDB refuses larger appends): a command that would pass it
 * waits for the next append.
 */
const MAX_BATCH = 500;
/** Events read per step when a stream is read backwards to where its state starts. */
const TAIL_PAGE = 16;

interface Queued {
  readonly decider: Decider<unknown, unknown, DomainEvent>;
  readonly command: unknown;
  readonly metadata: EventMetadata;
  readonly awaitProjections: readonly string[] | undefined;
  readonly resolve: (outcome: CommandOutcome<unknown, DomainEvent>) => void;
  readonly reject: (error: unknown) => void;
  attempts: number;
}

interface Decided {
  readonly item: Queued;
  readonly events: DomainEvent[];
  readonly state: unknown;
  readonly toAppend: EventToAppend[];
}

const reasonOf = (error: unknown): string =>
  error instanceof EventStoreUnavailableError || error instanceof AppendOutcomeUnknownError ? error.reason : 'the event log failed';

const withCause = (error: DomainError, cause: unknown): DomainError => Object.assign(error, { cause });

/** Nothing was appended: a retry cannot duplicate anything. */
export const changeNotSaved = (cause: unknown) =>
  withCause(
    new DomainError('unavailable', 'storage_unavailable', `The change was not saved: ${reasonOf(cause)}; it is safe to retry`),
    cause,
  );

const eventLogUnreadable = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'storage_unavailable',
      `The event log could not be read: ${reasonOf(cause)}; nothing was changed, it is safe to retry`,
    ),
    cause,
  );

const outcomeUnknown = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'storage_unavailable',
      cause instanceof AppendOutcomeUnknownError
        ? `The event log failed during the write (${reasonOf(cause)}): the change may or may not be saved; read it before retrying`
        : `The event log failed during the write (${reasonOf(cause)}) and could not be read back: the change may or may not be saved; read it before retrying`,
    ),
    cause,
  );

/** One command's events are more than the log takes in one append: refused whole, nothing written. */
const changeTooLarge = (cause: AppendTooLargeError) =>
  withCause(
    new DomainError(
      'payload_too_large',
      'change_too_large',
      `The change is larger than the event log accepts in one write (${cause.bytes} bytes of events, at most ${cause.maxBytes}); nothing was saved`,
    ),
    cause,
  );

/** The append is in the log; only confirming the read models failed (for an unexpected reason). */
const savedUnconfirmed = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'projection_lag',
      'The change was saved, but whether the read models reflect it could not be checked; do not send it again, read it back shortly',
    ),
    cause,
  );

/**
 * The one write path: read the stream, fold it, decide, append with the revision read,
 * then wait until the read models the answer depends on show the change. A concurrent
 * writer (another process) makes the append fail on its expected revision; the command is
 * then decided again on fresh state.
 *
 * Its errors tell the truth about the log: anything that fails before or at the append says
 * the change was not saved (an append that failed is read back, so an append the store did
 * write is never reported as lost), unless the store cannot tell whether it wrote it (a
 * timeout): that says it may or may not be saved; only a failure after the append says it was
 * saved.
 *
 * Commands for one stream are queued: whatever arrived while the previous append was in
 * flight is decided in order against the evolving state and appended as one batch (up to the
 * store's largest append), so a busy stream (a room's timeline) costs one append per batch and
 * no conflicts in-process.
 * Folded states are cached by stream and revision (LRU), so a hot stream is read from where
 * the cache left it rather than from its start; another process's appends are still read.
 */
@Injectable()
export class CommandPipeline {
  private readonly cache = new LRUCache<string, Folded<unknown>>({ max: STATE_CACHE_ENTRIES });
  private readonly queues = new Map<string, Queued[]>();
  /**
   * Stands for the current turn of the event loop, and is replaced at the next turn and after
   * every append. A stream read to its end in this turn is not read again in it: a send loads
   * the sender, the room and the timeline, some twice, and concurrent sends to one room load
   * the same streams; another process's append shows from the next turn, and a decision made
   * before it still fails on its expected revision and is made again on a fresh read.
   */
  private turn: object = {};
  private turnEnding = false;
  /** Set below the store's limit after it refused a group as too large (a limit it had not declared). */
  private refusedBytes = Infinity;

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    @Optional() @Inject(INSTANCE_EPOCHS) private readonly epochs?: InstanceEpochs,
  ) {}

  /** The stream's current state; a failed read answers 503 "nothing was changed". */
  async load<S, E extends DomainEvent>(stream: string, decider: Decider<S, unknown, E>): Promise<Folded<S>> {
    const epoch = await this.wipedAt(stream);
    let cached = this.cache.get(stream) as Folded<S> | undefined;
    if (cached && (cached.epoch ?? null) !== epoch) cached = undefined; // wiped since: fold afresh
    if (cached && cached.readIn === this.turn) return cached;
    let state = cached ? cached.state : epoch !== null && decider.wipedState ? decider.wipedState() : decider.initialState();
    let revision = cached ? cached.revision : -1;
    const newer = cached || !decider.foldsFrom ? await this.readStream(stream, { fromRevision: revision + 1 }) : await this.tail(stream, decider.foldsFrom, epoch);
    for (const event of newer) {
      // Wiped events still count for the revision the next append expects.
      if (epoch === null || event.position > epoch) state = decider.evolve(state, event as unknown as E);
      revision = event.revision;
    }
    const folded = { state, revision, epoch, readIn: this.currentTurn() };
    this.cache.set(stream, folded);
    return folded;
  }

  run<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    metadata: EventMetadata,
    options: RunOptions = {},
  ): Promise<CommandOutcome<S, E>> {
    // The HTTP request this runs for (if any) is named in its events, joining the audit trail to the access log.
    const requestId = requestIdOf(metadata.actor);
    return new Promise((resolve, reject) => {
      const queued: Queued = {
        decider: decider as unknown as Queued['decider'],
        command,
        metadata: requestId && metadata.request_id === undefined ? { ...metadata, request_id: requestId } : metadata,
        awaitProjections: options.awaitProjections,
        resolve: resolve as Queued['resolve'],
        reject,
        attempts: 0,
      };
      const queue = this.queues.get(stream);
      if (queue) {
        queue.push(queued);
        return;
      }
      this.queues.set(stream, [queued]);
      void this.drain(stream);
    });
  }

  private currentTurn(): object {
    if (!this.turnEnding) {
      this.turnEnding = true;
      setImmediate(() => this.nextTurn());
    }
    return this.turn;
  }

  /** What was read so far may be out of date: every stream is read again before it is used. */
  private nextTurn(): void {
    this.turn = {};
    this.turnEnding = false;
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

  /** Events of a stream as the write side reads them: a failed read answers 503 "nothing was changed". */
  async readStream(stream: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    try {
      return await this.events.readStream(stream, options);
    } catch (error) {
      throw eventLogUnreadable(error);
    }
  }

  private async drain(stream: string): Promise<void> {
    const queue = this.queues.get(stream)!;
    try {
      while (queue.length) await this.decideAndAppend(stream, queue, queue.splice(0, MAX_BATCH));
    } finally {
      this.queues.delete(stream);
    }
  }

  private async decideAndAppend(stream: string, queue: Queued[], batch: Queued[]): Promise<void> {
    let folded: Folded<unknown>;
    try {
      folded = await this.load(stream, batch[0].decider);
    } catch (error) {
      for (const item of batch) item.reject(error); // nothing appended: "nothing was changed", or a bug (500)
      return;
    }
    const maxBytes = Math.min(this.events.maxAppendBytes ?? Infinity, this.refusedBytes);
    let state = folded.state;
    let bytes = 0;
    const decided: Decided[] = [];
    for (const [index, item] of batch.entries()) {
      let events: DomainEvent[];
      let next = state;
      try {
        events = item.decider.decide(item.command, state);
        for (const event of events) next = item.decider.evolve(next, event);
      } catch (error) {
        item.reject(error); // this command alone fails; the others still go ahead
        continue;
      }
      const toAppend = events.map((e) => ({ id: newEventId(), type: e.type, data: e.data, metadata: item.metadata }));
      // Sized only where a store has a limit: serializing every send to count it costs SQLite for nothing.
      const size = maxBytes === Infinity ? 0 : appendSize(toAppend);
      if (decided.some((d) => d.toAppend.length) && bytes + size > maxBytes) {
        // Decided again, first, on the state this append leaves.
        queue.unshift(...batch.slice(index));
        break;
      }
      bytes += size;
      state = next;
      decided.push({ item, events, state, toAppend });
    }
    const toAppend = decided.flatMap((d) => d.toAppend);
    if (toAppend.length === 0) {
      for (const d of decided) d.item.resolve({ state: d.state, events: [], position: null });
      return;
    }
    const expected: ExpectedRevision = folded.revision < 0 ? 'no_stream' : folded.revision;
    let result: AppendResult;
    try {
      const started = performance.now();
      result = await this.events.append(stream, toAppend, expected);
      recordAppend(toAppend.length, (performance.now() - started) / 1000);
      this.nextTurn(); // what was read before the append may be out of date
    } catch (error) {
      this.nextTurn(); // the log may hold what this process has not read
      // The cached state is still that of `folded.revision` (evolve is pure): loading reads on from it.
      if (error instanceof WrongExpectedRevisionError) return this.retryOnFreshState(queue, decided);
      if (error instanceof AppendTooLargeError) return this.splitTooLarge(queue, decided, error);
      // Refusals that wrote nothing: a conflict the store knows of, a store that could not write.
      if (error instanceof DomainError) {
        for (const d of decided) d.item.reject(error);
        return;
      }
      if (error instanceof EventStoreUnavailableError) {
        for (const d of decided) d.item.reject(changeNotSaved(error));
        return;
      }
      // The store wrote it but cannot say it will last: reading it back would prove nothing.
      if (error instanceof AppendOutcomeUnknownError && !error.foundMeansKept) {
        for (const d of decided) d.item.reject(outcomeUnknown(error));
        return;
      }
      // A store may fail after writing (a lost connection): the log, not the error, says which.
      // Only a store that can say the write never left (any error but "unknown") is believed when it is not there.
      let landed: AppendResult | null;
      try {
        landed = await this.landed(stream, expected, toAppend);
      } catch {
        for (const d of decided) d.item.reject(outcomeUnknown(error));
        return;
      }
      if (!landed) {
        for (const d of decided) d.item.reject(error instanceof AppendOutcomeUnknownError ? outcomeUnknown(error) : changeNotSaved(error));
        return;
      }
      result = landed;
    }
    this.cache.set(stream, { state, revision: result.nextExpectedRevision, epoch: folded.epoch });
    // The next batch may append while this one waits for the read models.
    this.answerOnceProjected(decided, result.position);
  }

  /**
   * A group the store refused as too large is decided again in smaller groups (the store's
   * limit was lower than it declared, or than this count of it); a single command that is too
   * large on its own is refused (413), and the commands after it go ahead.
   */
  private splitTooLarge(queue: Queued[], decided: Decided[], error: AppendTooLargeError): void {
    const writing = decided.filter((d) => d.toAppend.length);
    if (writing.length === 1) {
      writing[0].item.reject(changeTooLarge(error));
      // Those that decided nothing decided on its events: again, without them.
      queue.unshift(...decided.filter((d) => d !== writing[0]).map((d) => d.item));
      return;
    }
    const limit = error.bytes > error.maxBytes ? error.maxBytes : Math.floor(error.bytes / 2);
    this.refusedBytes = Math.min(this.refusedBytes, limit);
    queue.unshift(...decided.map((d) => d.item));
  }

  private retryOnFreshState(queue: Queued[], decided: Decided[]): void {
    const again: Queued[] = [];
    for (const { item } of decided) {
      if (++item.attempts < MAX_ATTEMPTS) again.push(item);
      else item.reject(conflict('concurrent_modification', 'The resource was changed by another request at the same time; retry'));
    }
    queue.unshift(...again); // decided again, in the same order, on fresh state
  }

  /** Whether an append that reported a failure is in the log after all, and where. */
  private async landed(stream: string, expected: ExpectedRevision, appended: readonly EventToAppend[]): Promise<AppendResult | null> {
    const first = typeof expected === 'number' ? expected + 1 : 0;
    const found = await this.events.readStream(stream, { fromRevision: first, maxCount: appended.length });
    if (found.length < appended.length || found.some((event, i) => event.id !== appended[i].id)) return null;
    const last = found[found.length - 1];
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  /** Commands that wait for the same projections share one wait. */
  private answerOnceProjected(decided: Decided[], position: LogPosition): void {
    const byProjections = new Map<string, { awaited: AwaitedProjections; group: Decided[] }>();
    for (const d of decided) {
      const awaited: AwaitedProjections = d.item.awaitProjections ?? { folding: [...new Set(d.events.map((e) => e.type))].sort() };
      const key = JSON.stringify(awaited);
      const same = byProjections.get(key);
      if (same) same.group.push(d);
      else byProjections.set(key, { awaited, group: [d] });
    }
    for (const { awaited, group } of byProjections.values()) {
      // A command that appended nothing (it changed nothing) waits for nothing either.
      const none = Array.isArray(awaited) ? awaited.length === 0 : (awaited as { folding: readonly string[] }).folding.length === 0;
      const projected = none ? Promise.resolve() : this.readYourWrites.waitFor(position, awaited);
      projected.then(
        () => {
          for (const d of group) d.item.resolve({ state: d.state, events: d.events, position: d.events.length ? position : null });
        },
        (error) => {
          // The append succeeded: whatever failed since, the change is saved and must say so.
          const answer = error instanceof DomainError && error.reason === 'projection_lag' ? error : savedUnconfirmed(error);
          for (const d of group) d.item.reject(answer);
        },
      );
    }
  }
}
