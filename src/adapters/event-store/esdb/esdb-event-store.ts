import {
  ANY,
  AccessDeniedError,
  AppendExpectedRevision,
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  FORWARDS,
  Filter,
  JSONType,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  Position,
  ReadPosition,
  ReadableSubscription,
  RecordedEvent as EsdbRecordedEvent,
  START,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  StreamingRead,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  eventTypeFilter,
  jsonEvent,
  streamNameFilter,
} from '@eventstore/db-client';
import { conflict } from '../../../shared/domain/errors';
import { EventMetadata, LogPosition, RecordedEvent } from '../../../shared/domain/event';
import {
  AppendOutcomeUnknownError,
  AppendResult,
  AppendTooLargeError,
  EventStore,
  EventStoreUnavailableError,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WrongExpectedRevisionError,
  appendSize,
  newEventId,
} from '../../../shared/ports/event-store.port';
import { EPHEMERAL_STREAM_PREFIX } from '../../ephemeral/esdb-ephemeral-bus';
import { appendUnbatched, connectEventStoreDb, EsdbTimeoutError, withTimeout } from '../../shared/esdb-client';

export { EsdbTimeoutError } from '../../shared/esdb-client';

export interface EsdbEventStoreOptions {
  /**
   * How long any call may wait for the server. The client waits forever on an endpoint that
   * accepts TCP but never answers, whatever deadline it is given, so every call is raced
   * against this timer. For reads it bounds the wait for each next event, not the whole read.
   */
  readonly timeoutMs?: number;
  /** readAll's default maxCount (as in the SQLite adapter) and the largest page it reads. */
  readonly pageSize?: number;
  /**
   * The server's MaxAppendSize as far as Parley knows it before a refusal says otherwise:
   * EventStoreDB's default (1 MiB). A server that allows more (EVENTSTORE_MAX_APPEND_SIZE)
   * takes larger single changes; grouped writes stay under this value.
   */
  readonly maxAppendBytes?: number;
}

/** EventStoreDB's default MaxAppendSize. */
export const DEFAULT_MAX_APPEND_BYTES = 1024 * 1024;

/**
 * The server ended a subscription that nobody closed (a restart, a leader change, a deleted
 * stream): thrown out of the `for await`, so that the consumer resubscribes from its checkpoint
 * instead of taking the end for the end of the log.
 */
export class EsdbSubscriptionEndedError extends Error {
  constructor(what: string) {
    super(`EventStoreDB ended ${what}`);
    this.name = 'EsdbSubscriptionEndedError';
  }
}

/** A hard-deleted (tombstoned) stream can never be written again: a conflict, and nothing was stored. */
const streamDeleted = () =>
  conflict(
    'stream_deleted',
    'The resource was deleted permanently from the event log; nothing was written, and its id cannot be used again',
  );

const WIDTH = 20; // a u64 has at most 20 decimal digits
/** `commit:prepare`, each zero-padded to 20 digits, so that string order is log order. */
export const esdbPosition = (p: Position): LogPosition =>
  `${p.commit.toString().padStart(WIDTH, '0')}:${p.prepare.toString().padStart(WIDTH, '0')}`;

const ESDB_POSITION = /^(\d{20}):(\d{20})$/;

/**
 * A position this log cannot resume from: a checkpoint of read models folded from another event
 * log (a SQLite log's positions are 20 digits without a colon).
 */
export class ForeignLogPositionError extends Error {
  constructor(position: LogPosition) {
    super(
      `${JSON.stringify(position)} is not a position of an EventStoreDB log: the read models were folded from another event log. ` +
        'Rebuild them from this one (stop the API processes and projector workers, then npm run rebuild).',
    );
    this.name = 'ForeignLogPositionError';
  }
}

export const parseEsdbPosition = (position: LogPosition): Position => {
  const match = ESDB_POSITION.exec(position);
  if (!match) throw new ForeignLogPositionError(position);
  return { commit: BigInt(match[1]), prepare: BigInt(match[2]) };
};

/** What servers before 22.6 send as the position of an event read from a stream: no position. */
const NO_POSITION = 2n ** 64n - 1n;

const knownPosition = (p: Position | undefined): LogPosition | undefined =>
  p && p.commit !== NO_POSITION && p.prepare !== NO_POSITION ? esdbPosition(p) : undefined;

/**
 * The event log in EventStoreDB (client 6.x, gRPC). Events are JSON; revisions (bigints in the
 * client) become numbers; `$`-prefixed system events and streams are never returned, so positions
 * seen by readers (checkpoints, headPosition) are always positions of application events.
 */
export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly timeoutMs: number;
  private readonly pageSize: number;
  private appendLimit: number;
  private readonly feeds = new Set<LogSubscription>();

  /** A store on a client of its own (see connectEventStoreDb; a process shares one client with its ephemeral bus). */
  static async connect(connectionString: string, options: EsdbEventStoreOptions = {}): Promise<EsdbEventStore> {
    return new EsdbEventStore(await connectEventStoreDb(connectionString, options), options);
  }

  /** Closing the store disposes the client. A connection string makes a client without asking the server its version. */
  constructor(connection: string | EventStoreDBClient, options: EsdbEventStoreOptions = {}) {
    this.client = typeof connection === 'string' ? EventStoreDBClient.connectionString(connection) : connection;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.pageSize = options.pageSize ?? 500;
    this.appendLimit = options.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES;
  }

  get maxAppendBytes(): number {
    return this.appendLimit;
  }

  recognizes(position: LogPosition): boolean {
    return ESDB_POSITION.test(position);
  }

  async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const data = events.map((e) =>
      jsonEvent({
        id: e.id ?? newEventId(),
        type: e.type,
        // The client JSON-encodes whatever it is given; the casts only satisfy its narrower types.
        data: (e.data ?? null) as JSONType,
        metadata: (e.recordedAt === undefined ? (e.metadata ?? {}) : { ...e.metadata, [RECORDED_AT_KEY]: e.recordedAt }) as unknown as JSONType,
      }),
    );
    let result;
    let expectedRevision = toEsdbExpected(expected);
    for (let attempt = 0; ; attempt++) {
      try {
        result = await this.deadline(
          appendUnbatched(this.client, streamName, data, { expectedRevision, deadline: this.timeoutMs }),
          `an append to ${streamName}`,
        );
        break;
      } catch (error) {
        if (error instanceof MaxAppendSizeExceededError && error.maxAppendSize > 0) {
          this.appendLimit = Math.min(this.appendLimit, error.maxAppendSize);
        }
        if (!(error instanceof WrongExpectedVersionError)) throw appendFailure(error, streamName, appendSize(events));
        const actual = typeof error.actualVersion === 'bigint' && error.actualVersion >= 0n ? error.actualVersion : null;
        // A soft-deleted stream reads as absent (so the caller expected no stream) but keeps its
        // numbering: EventStoreDB recreates it by appending after its last revision.
        if (attempt === 0 && expected === 'no_stream' && actual !== null && (await this.readStream(streamName, { maxCount: 1 })).length === 0) {
          expectedRevision = actual;
          continue;
        }
        throw new WrongExpectedRevisionError(streamName, expected, actual === null ? 'no_stream' : Number(actual));
      }
    }
    const nextExpectedRevision = Number(result.nextExpectedRevision);
    // The reported position is the write's; for a single event that is the event's own position.
    // For several events, read the last one back rather than trust which record it points at.
    let position = events.length === 1 ? knownPosition(result.position) : undefined;
    if (!position) {
      const [last] = await this.readStream(streamName, { fromRevision: nextExpectedRevision, maxCount: 1 });
      position = last?.position || knownPosition(result.position);
    }
    if (!position) throw new Error(`EventStoreDB reported no log position for the append to ${streamName}`);
    return { nextExpectedRevision, position };
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount === 0) return [];
    const backwards = options.direction === 'backwards';
    try {
      const resolved = await this.drain(
        this.client.readStream(streamName, {
          direction: backwards ? BACKWARDS : FORWARDS,
          fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
          maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
        }),
        `a read of ${streamName}`,
      );
      return resolved.flatMap((r) => (r.event ? [toRecorded(r.event)] : []));
    } catch (error) {
      // Soft-deleted streams answer "not found", tombstoned ones "deleted": both read as absent
      // (an append to a tombstoned one then fails with a conflict, see append).
      if (error instanceof StreamNotFoundError || error instanceof StreamDeletedError) return [];
      throw error;
    }
  }

  /**
   * Client 6.x cannot filter reads of $all on the server (only subscriptions), so this pages
   * through $all and filters here. `after` is excluded whether or not the server includes it.
   * The log also holds what readers never see (typing and presence signals, the server's own
   * events), so a page that did not fill the request is followed by larger ones, up to
   * `pageSize`: a tail of signals costs a few round trips, not one per signal.
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.maxCount ?? this.pageSize;
    if (limit <= 0) return [];
    const matches = compileFilter(options.filter);
    const filtered = Boolean(options.filter?.eventTypes?.length || options.filter?.streamPrefixes?.length);
    const out: RecordedEvent[] = [];
    let last: LogPosition | null = options.after ?? null;
    // One more than needed: the first event may be `after` itself.
    let batch = (filtered ? this.pageSize : Math.min(limit, this.pageSize)) + 1;
    for (;; batch = Math.min(batch * 4, this.pageSize + 1)) {
      const page = await this.drain(
        this.client.readAll({ fromPosition: last === null ? START : parseEsdbPosition(last), maxCount: batch }),
        'a read of $all',
      );
      for (const { event } of page) {
        if (!event) continue;
        const position = esdbPosition(event.position);
        if (last !== null && position <= last) continue;
        last = position;
        if (!isApplicationEvent(event) || !matches(event)) continue;
        out.push(toRecorded(event, position));
        if (out.length === limit) return out;
      }
      if (page.length < batch) return out; // the end of the log
    }
  }

  /**
   * The newest application event: what a subscription's checkpoint can eventually reach.
   * Pages grow as they go, so a tail of signals and system events costs few round trips.
   */
  async headPosition(): Promise<LogPosition | null> {
    let batch = 64;
    let from: ReadPosition = END;
    let seen: LogPosition | null = null;
    for (;;) {
      const page = await this.drain(
        this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: batch }),
        'a read of the head of $all',
      );
      for (const { event } of page) {
        if (!event) continue;
        const position = esdbPosition(event.position);
        if (seen !== null && position >= seen) continue;
        seen = position;
        if (isApplicationEvent(event)) return position;
      }
      if (page.length < batch || seen === null) return null;
      from = parseEsdbPosition(seen);
      batch = Math.min(batch * 4, 4_096);
    }
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): LogSubscription {
    const matches = compileFilter(options.filter);
    const after = options.after ?? null;
    return this.track(
      new EsdbFeed(
        () =>
          this.client.subscribeToAll({
            // Subscriptions start after the given position (documented as exclusive).
            fromPosition: after === null ? START : parseEsdbPosition(after),
            filter: serverFilter(options.filter),
          }),
        () => {
          // Guards against a duplicate should the server ever include the start position.
          let last = after;
          return ({ event }) => {
            if (!event) return null;
            const position = esdbPosition(event.position);
            if (last !== null && position <= last) return null;
            last = position;
            return isApplicationEvent(event) && matches(event) ? toRecorded(event, position) : null;
          };
        },
        this.timeoutMs,
        'a subscription to $all',
        (feed) => this.feeds.delete(feed),
      ),
    );
  }

  subscribeToStream(streamName: string, options: SubscribeToStreamOptions = {}): LogSubscription {
    const after = options.afterRevision ?? null;
    return this.track(
      new EsdbFeed(
        () => this.client.subscribeToStream(streamName, { fromRevision: after === null ? START : BigInt(after) }),
        () => {
          let last = after ?? -1;
          return ({ event }) => {
            if (!event) return null;
            // A hard delete appends this tombstone: the stream has ended for good.
            if (event.type === '$streamDeleted') throw new EsdbSubscriptionEndedError(`a subscription to ${streamName} (the stream was deleted)`);
            const recorded = toRecorded(event);
            if (recorded.revision <= last) return null;
            last = recorded.revision;
            return recorded;
          };
        },
        this.timeoutMs,
        `a subscription to ${streamName}`,
        (feed) => this.feeds.delete(feed),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.feeds].map((f) => f.close()));
    await this.deadline(this.client.dispose(), 'closing the connection').catch(() => undefined);
  }

  private track(feed: LogSubscription): LogSubscription {
    this.feeds.add(feed);
    return feed;
  }

  private deadline<T>(promise: Promise<T>, what: string): Promise<T> {
    return withTimeout(promise, this.timeoutMs, what);
  }

  /** Collects a streamed read, failing if the server goes silent for timeoutMs. */
  private async drain<T>(stream: StreamingRead<T>, what: string): Promise<T[]> {
    const out: T[] = [];
    const iterator = stream[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await this.deadline(iterator.next(), what);
        if (next.done) return out;
        out.push(next.value);
      }
    } catch (error) {
      stream.on('error', () => undefined); // late errors of an abandoned read (see EsdbFeed.close)
      stream.cancel().catch(() => undefined);
      stream.destroy();
      throw error;
    }
  }
}

const CLOSED = Symbol('closed');

/**
 * A client subscription consumed with `for await`, one event at a time: EventStoreDB's own
 * catch-up subscription already switches from stored to live events without a gap.
 * `close()` ends a pending iteration at once, whatever the stream does after cancellation.
 * Any other end throws: an error of the stream (a dropped connection, a deleted stream), no
 * confirmation within the timeout, or the server ending it (EsdbSubscriptionEndedError).
 */
class EsdbFeed<R> implements LogSubscription {
  private closed = false;
  private active: ReadableSubscription<R> | null = null;
  /** Ends the pending wait for the next event (see nextOf). */
  private wake: (() => void) | null = null;

  constructor(
    private readonly open: () => ReadableSubscription<R>,
    private readonly acceptor: () => (item: R) => RecordedEvent | null,
    private readonly timeoutMs: number,
    private readonly what: string,
    private readonly onClose: (feed: LogSubscription) => void,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.closed) return;
    const subscription = this.open();
    this.active = subscription;
    // The server confirms a subscription first; silence means a hung connection.
    const watchdog = setTimeout(
      () => subscription.destroy(new EsdbTimeoutError(`${this.what} (no confirmation)`, this.timeoutMs)),
      this.timeoutMs,
    );
    watchdog.unref();
    subscription.once('confirmation', () => clearTimeout(watchdog));
    const accept = this.acceptor();
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await this.nextOf(iterator);
        if (next === CLOSED || this.closed) return;
        if (next.done) throw new EsdbSubscriptionEndedError(this.what);
        const event = accept(next.value);
        if (event) yield event;
        if (this.closed) return;
      }
    } catch (error) {
      if (this.closed) return; // cancelling surfaces as a stream error
      throw error;
    } finally {
      clearTimeout(watchdog);
      await this.close();
    }
  }

  /**
   * The subscription's next item, or CLOSED as soon as close() is called. A fresh promise each
   * time, never a race against one promise that lives as long as the feed: every such race stays
   * attached to it with its result until it settles, so a live subscription would keep every
   * event it ever delivered.
   */
  private nextOf(iterator: AsyncIterator<R>): Promise<IteratorResult<R> | typeof CLOSED> {
    return new Promise<IteratorResult<R> | typeof CLOSED>((resolve, reject) => {
      this.wake = () => resolve(CLOSED);
      iterator.next().then(resolve, reject);
    }).finally(() => {
      this.wake = null;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.onClose(this);
    const subscription = this.active;
    if (subscription) {
      // The client re-emits the call's late errors (a connection that fails after cancelling)
      // on the subscription itself; unheard, an 'error' event would crash the process.
      subscription.on('error', () => undefined);
      // Not awaited: on a hung connection unsubscribe() never settles.
      subscription.unsubscribe().catch(() => undefined);
      subscription.destroy();
    }
  }
}

/**
 * What a failed append (other than a wrong expected revision) means for its caller: refused,
 * with nothing written (a conflict, too large, a server that never got it or turned it away),
 * or unknown. A timeout (the server's own commit timeout, the call's deadline, this adapter's),
 * a dropped or cancelled call: the server may have it and write it later, so not finding it
 * yet proves nothing, and a retry with new event ids would write the change twice.
 */
export function appendFailure(error: unknown, streamName: string, bytes: number): Error {
  if (error instanceof StreamDeletedError) return streamDeleted();
  if (error instanceof MaxAppendSizeExceededError) return new AppendTooLargeError(streamName, error.maxAppendSize, bytes, { cause: error });
  if (error instanceof UnavailableError && NEVER_SENT.test(error.message)) {
    return new EventStoreUnavailableError('EventStoreDB is unreachable', { cause: error });
  }
  if (error instanceof NotLeaderError) return new EventStoreUnavailableError('the EventStoreDB node is not the leader', { cause: error });
  if (error instanceof AccessDeniedError) return new EventStoreUnavailableError('EventStoreDB refused the credentials', { cause: error });
  const reason =
    error instanceof EsdbTimeoutError || error instanceof TimeoutError || error instanceof DeadlineExceededError
      ? 'EventStoreDB did not confirm the write in time'
      : 'the connection to EventStoreDB failed during the write';
  return new AppendOutcomeUnknownError(reason, { cause: error, foundMeansKept: true });
}

/**
 * gRPC's words for a call that never left this process (no connection, an unresolvable name, a
 * closed channel), and the server's for one it turned away unread while starting.
 */
const NEVER_SENT = /No connection established|Name resolution failed|Channel closed before call started|Server Is Not Ready/i;

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) throw new Error(`Invalid expected revision: ${expected}`);
      return BigInt(expected);
  }
}

type AnyRecorded = EsdbRecordedEvent;

/**
 * What the log means to its readers (projectors, the live log, rebuilds, audits): neither
 * EventStoreDB's own events and streams (`$…`) nor the typing and presence signals that the
 * ephemeral bus writes to the same server (`ephemeral-…` streams, dropped by the server after
 * their max age). readAll, headPosition and both subscriptions pass every event through here.
 */
const isApplicationEvent = (e: AnyRecorded): boolean =>
  !e.type.startsWith('$') && !e.streamId.startsWith('$') && !e.streamId.startsWith(EPHEMERAL_STREAM_PREFIX);

/** The exact semantics of LogFilter, applied here even when the server filtered already. */
function compileFilter(filter: LogFilter | undefined): (e: AnyRecorded) => boolean {
  const types = filter?.eventTypes?.length ? new Set(filter.eventTypes) : null;
  const prefixes = filter?.streamPrefixes?.length ? filter.streamPrefixes : null;
  return (e) => (!types || types.has(e.type)) && (!prefixes || prefixes.some((p) => e.streamId.startsWith(p)));
}

/**
 * The server filters on one thing only: stream prefixes when given (the other condition is
 * checked here), else exact event types by regex, else stream names that are neither system
 * (`$…`) nor ephemeral signal streams, so a busy typing channel costs the readers nothing.
 * Whatever the server lets through is checked again by isApplicationEvent and the filter.
 */
function serverFilter(filter: LogFilter | undefined): Filter {
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  if (filter?.eventTypes?.length) {
    return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$` });
  }
  return streamNameFilter({ regex: `^(?!\\$|${escapeRegex(EPHEMERAL_STREAM_PREFIX)})` });
}

/** Escapes .NET regex metacharacters (whitespace is literal without IgnorePatternWhitespace). */
const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|#]/g, (c) => `\\${c}`);

/**
 * EventStoreDB sets an event's `created` time itself: a time given to an append (an import
 * keeping the original) travels in the metadata under this key and is read back as `recordedAt`.
 */
const RECORDED_AT_KEY = 'parley_recorded_at';

function toRecorded(e: AnyRecorded, position?: LogPosition): RecordedEvent {
  const stored = (e.metadata && !(e.metadata instanceof Uint8Array) && typeof e.metadata === 'object' ? e.metadata : {}) as Record<string, unknown>;
  const { [RECORDED_AT_KEY]: givenRecordedAt, ...metadata } = stored;
  return {
    id: e.id,
    streamName: e.streamId,
    revision: Number(e.revision),
    // Servers before 22.6 (refused at connect) report no position for stream reads.
    position: position ?? knownPosition(e.position) ?? '',
    type: e.type,
    data: e.data,
    metadata: metadata as EventMetadata,
    recordedAt: typeof givenRecordedAt === 'string' ? givenRecordedAt : e.created.toISOString(),
  };
}
