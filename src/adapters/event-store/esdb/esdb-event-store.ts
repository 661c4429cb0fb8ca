import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  RecordedEvent as EsdbRecordedEvent,
  FORWARDS,
  MaxAppendSizeExceededError,
  ReadPosition,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  StreamingRead,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
  WrongExpectedRevisionError,
  appendSize,
} from '../../../shared/ports/event-store.port';
import { appendUnbatched, connectEventStoreDb, withTimeout } from '../../shared/esdb-client';
import { appendFailure, toEsdbExpected } from './esdb-append-errors';
import { EsdbFeed, EsdbSubscriptionEndedError } from './esdb-feed';
import { esdbPosition, isEsdbPosition, knownPosition, parseEsdbPosition } from './esdb-positions';
import { compileFilter, isApplicationEvent, serverFilter, toEventData, toRecorded } from './esdb-records';

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
    return isEsdbPosition(position);
  }

  async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const data = events.map(toEventData);
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

  /** The newest application event: what a subscription's checkpoint can eventually reach. */
  async headPosition(): Promise<LogPosition | null> {
    return this.newestBackwards(() => true, 'a read of the head of $all');
  }

  /**
   * EventStoreDB keeps no time index: the last application event recorded before `time` is
   * found by reading $all backwards from its end. The cost is the events recorded at or after
   * `time`, which the replay that asks delivers again anyway, never the log before them (a scan
   * from the start read all of that).
   */
  async positionBeforeTime(time: string): Promise<{ before: LogPosition | null }> {
    const before = await this.newestBackwards((event, position) => toRecorded(event, position).recordedAt < time, 'a read of $all back to a time');
    return { before };
  }

  /**
   * The newest application event of $all that `accepts`, read backwards from the end. Pages
   * grow as they go, so a tail of signals and system events costs few round trips.
   */
  private async newestBackwards(accepts: (event: EsdbRecordedEvent, position: LogPosition) => boolean, what: string): Promise<LogPosition | null> {
    let batch = 64;
    let from: ReadPosition = END;
    let seen: LogPosition | null = null;
    for (;;) {
      const page = await this.drain(this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: batch }), what);
      for (const { event } of page) {
        if (!event) continue;
        const position = esdbPosition(event.position);
        if (seen !== null && position >= seen) continue;
        seen = position;
        if (isApplicationEvent(event) && accepts(event, position)) return position;
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
