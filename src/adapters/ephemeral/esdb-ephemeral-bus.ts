import { randomUUID } from 'node:crypto';
import {
  ANY,
  AllStreamResolvedEvent,
  AllStreamSubscription,
  END,
  EventStoreDBClient,
  jsonEvent,
  JSONType,
  metastreamOf,
  streamNameFilter,
} from '@eventstore/db-client';
import { EphemeralBus } from '../../shared/ports/ephemeral-bus.port';
import { appendUnbatched, EsdbTimeoutError, withTimeout } from '../shared/esdb-client';

export interface EsdbEphemeralBusOptions {
  /**
   * How long a call may wait for the server. The client waits forever on an endpoint that
   * accepts TCP but never answers, whatever deadline it is given, so calls are raced against
   * this timer; a subscription that is not confirmed, or does not echo this process's own
   * signals, within it is opened again.
   */
  readonly timeoutMs?: number;
  /** Stream metadata `maxAge` (seconds) of the signal streams: the server drops older signals. */
  readonly maxAgeSeconds?: number;
  /** First pause before a failed subscription is opened again; it doubles up to 30 s until one is confirmed. */
  readonly retryMs?: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * The category of the signal streams. The EventStoreDB event store leaves these streams out of
 * everything it reads from $all (see its isApplicationEvent), so signals never reach projectors,
 * the live log or audits.
 */
export const EPHEMERAL_STREAM_PREFIX = 'ephemeral-';
const STREAM_PREFIX = EPHEMERAL_STREAM_PREFIX;
const EVENT_TYPE = 'EphemeralSignal';

/** What each signal event holds: its channel (all of a process's signals share one stream). */
interface SignalData {
  readonly channel: string;
  readonly message: unknown;
}

/**
 * Typing and presence signals between API processes through EventStoreDB (client 6.x).
 *
 * `publish` appends one `EphemeralSignal` event, naming its channel, to this process's own
 * stream `ephemeral-<random id>`, whose metadata sets a `maxAge` of 60 s, so the server drops
 * the signals soon after (their disk space comes back with the next scavenge). One stream per
 * process, not one per channel: one metadata write per process instead of one per room and
 * user, and few streams in the server's index. Each process has one subscription to `$all`,
 * from its end, filtered server-side to `ephemeral-` streams, and hands each signal to its
 * local listeners of that channel. A gap while the subscription is reopened loses signals;
 * that is acceptable here (presence heartbeats repair it).
 *
 * These streams never reach read models, the live log or the audit trail: the EventStoreDB
 * event store excludes `ephemeral-…` streams from its $all reads and subscriptions (on the
 * server where it can, and again in the client), and the audit CLI reads only entity streams.
 */
export class EsdbEphemeralBus implements EphemeralBus {
  /** This process's signal stream. */
  readonly streamName = `${STREAM_PREFIX}${randomUUID()}`;
  private readonly client: EventStoreDBClient;
  private readonly ownsClient: boolean;
  private readonly timeoutMs: number;
  private readonly maxAgeSeconds: number;
  private readonly retryMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();
  /** The stream's max-age, set or being set (null again after a failure). */
  private aged: Promise<void> | null = null;
  private subscription: AllStreamSubscription | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private echoCheck: NodeJS.Timeout | null = null;
  private lastReceivedAt = 0;
  private failures = 0;
  private closed = false;

  /** A client given is shared (the process's event store closes it); a connection string makes one of its own. */
  constructor(connection: string | EventStoreDBClient, options: EsdbEphemeralBusOptions = {}) {
    this.ownsClient = typeof connection === 'string';
    this.client = typeof connection === 'string' ? EventStoreDBClient.connectionString(connection) : connection;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAgeSeconds = options.maxAgeSeconds ?? 60;
    this.retryMs = options.retryMs ?? 1_000;
    this.onError = options.onError ?? ((error) => console.error('ephemeral bus (EventStoreDB) failed', error));
  }

  async publish(channel: string, message: unknown): Promise<void> {
    if (this.closed) return;
    await this.ensureMaxAge();
    const data: SignalData = { channel, message };
    await this.deadline(
      appendUnbatched(this.client, this.streamName, [jsonEvent({ type: EVENT_TYPE, data: data as unknown as JSONType })], {
        expectedRevision: ANY,
        deadline: this.timeoutMs,
      }),
      `an append to ${this.streamName}`,
    );
    this.expectEcho();
  }

  subscribe(channel: string, listener: (message: unknown) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    if (!this.closed && !this.subscription && !this.retry) this.open();
    return () => {
      set!.delete(listener);
      if (set!.size === 0 && this.listeners.get(channel) === set) this.listeners.delete(channel);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.drop();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.listeners.clear();
    if (this.ownsClient) await this.deadline(this.client.dispose(), 'closing the connection').catch(() => undefined);
  }

  /** Sets the stream's max-age once (again after a failure): the `$metadata` event of its metastream. */
  private ensureMaxAge(): Promise<void> {
    this.aged ??= this.deadline(
      appendUnbatched(this.client, metastreamOf(this.streamName), [jsonEvent({ type: '$metadata', data: { $maxAge: this.maxAgeSeconds } })], {
        expectedRevision: ANY,
        deadline: this.timeoutMs,
      }),
      `setting the max age of ${this.streamName}`,
    ).then(
      () => undefined,
      (error) => {
        this.aged = null;
        throw error;
      },
    );
    return this.aged;
  }

  /** The process's one subscription: new `ephemeral-` events only. */
  private open(): void {
    const subscription = this.client.subscribeToAll({
      fromPosition: END,
      filter: streamNameFilter({ prefixes: [STREAM_PREFIX] }),
    });
    this.subscription = subscription;
    this.lastReceivedAt = Date.now();
    // The server confirms a subscription first; silence means a hung connection.
    this.watchdog = setTimeout(
      () => this.fail(subscription, new EsdbTimeoutError('a subscription to $all (no confirmation)', this.timeoutMs)),
      this.timeoutMs,
    );
    this.watchdog.unref();
    subscription.once('confirmation', () => {
      if (this.subscription !== subscription) return;
      if (this.watchdog) clearTimeout(this.watchdog);
      this.watchdog = null;
      this.failures = 0;
    });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => this.receive(resolved));
    subscription.on('error', (error) => this.fail(subscription, error));
    subscription.on('end', () => this.fail(subscription, new Error('The $all subscription ended')));
    subscription.on('close', () => this.fail(subscription, new Error('The $all subscription closed')));
  }

  private receive(resolved: AllStreamResolvedEvent): void {
    this.lastReceivedAt = Date.now();
    const event = resolved.event;
    if (!event || event.type !== EVENT_TYPE || !event.streamId.startsWith(STREAM_PREFIX)) return;
    const data = event.data as unknown as SignalData | undefined;
    if (!data || typeof data !== 'object' || typeof data.channel !== 'string') return;
    for (const listener of [...(this.listeners.get(data.channel) ?? [])]) {
      try {
        listener(data.message);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /**
   * This process's own signals come back through its subscription; if nothing at all has
   * come back within the timeout after a successful append, the subscription is hung.
   */
  private expectEcho(): void {
    if (!this.subscription || this.echoCheck) return;
    const publishedAt = Date.now();
    const subscription = this.subscription;
    this.echoCheck = setTimeout(() => {
      this.echoCheck = null;
      if (this.subscription === subscription && this.lastReceivedAt < publishedAt) {
        this.fail(subscription, new EsdbTimeoutError('the echo of a signal on $all', this.timeoutMs));
      }
    }, this.timeoutMs);
    this.echoCheck.unref();
  }

  /** Drops a failed subscription (once) and opens a new one after a pause. */
  private fail(subscription: AllStreamSubscription, error: unknown): void {
    if (this.subscription !== subscription) return;
    this.drop();
    if (this.closed) return;
    if (this.failures++ === 0) this.onError(error); // once per outage, not once per attempt
    this.retry = setTimeout(
      () => {
        this.retry = null;
        if (!this.closed && !this.subscription && this.listeners.size > 0) this.open();
      },
      Math.min(this.retryMs * 2 ** Math.min(this.failures - 1, 10), 30_000),
    );
    this.retry.unref();
  }

  private drop(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    if (this.echoCheck) clearTimeout(this.echoCheck);
    this.watchdog = this.echoCheck = null;
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription) {
      subscription.removeAllListeners('data');
      subscription.on('error', () => undefined); // late errors of a dropped stream are expected
      // Not awaited: on a hung connection unsubscribe() never settles.
      subscription.unsubscribe().catch(() => undefined);
      subscription.destroy();
    }
  }

  private deadline<T>(promise: Promise<T>, what: string): Promise<T> {
    return withTimeout(promise, this.timeoutMs, what);
  }
}
