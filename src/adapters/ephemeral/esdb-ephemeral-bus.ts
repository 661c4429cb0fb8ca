import {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  END,
  EventStoreDBClient,
  jsonEvent,
  JSONType,
  streamNameFilter,
} from '@eventstore/db-client';
import { EphemeralBus } from '../../shared/ports/ephemeral-bus.port';

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

/** A call the server did not answer in time. */
export class EsdbEphemeralTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`EventStoreDB did not answer ${what} within ${ms} ms`);
    this.name = 'EsdbEphemeralTimeoutError';
  }
}

/**
 * The category of the signal streams. The EventStoreDB event store leaves these streams out of
 * everything it reads from $all (see its isApplicationEvent), so signals never reach projectors,
 * the live log or audits.
 */
export const EPHEMERAL_STREAM_PREFIX = 'ephemeral-';
const STREAM_PREFIX = EPHEMERAL_STREAM_PREFIX;
const EVENT_TYPE = 'EphemeralSignal';
/** How many streams are remembered as having their max-age set (a stream per room or user). */
const MAX_AGED_STREAMS = 10_000;

/** `typing:acme:r1` → `ephemeral-typing.acme.r1` (an `ephemeral` category, like the entity streams' naming). */
export const ephemeralStream = (channel: string): string => STREAM_PREFIX + channel.replace(/:/g, '.');

/** What each signal event holds: the channel itself, since stream names do not map back unambiguously. */
interface SignalData {
  readonly channel: string;
  readonly message: unknown;
}

/**
 * Typing and presence signals between API processes through EventStoreDB (client 6.x).
 *
 * `publish` appends one `EphemeralSignal` event to `ephemeral-<channel>`, a stream whose
 * metadata sets a `maxAge` of 60 s, so the server drops the signals soon after. Each process
 * has one subscription to `$all`, from its end, filtered server-side to `ephemeral-` streams,
 * and hands each signal to its local listeners of that channel. A gap while the subscription
 * is reopened loses signals; that is acceptable here (presence heartbeats repair it).
 *
 * These streams never reach read models, the live log or the audit trail: the EventStoreDB
 * event store excludes `ephemeral-…` streams from its $all reads and subscriptions (on the
 * server where it can, and again in the client), and the audit CLI reads only entity streams.
 */
export class EsdbEphemeralBus implements EphemeralBus {
  private readonly client: EventStoreDBClient;
  private readonly ownsClient: boolean;
  private readonly timeoutMs: number;
  private readonly maxAgeSeconds: number;
  private readonly retryMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();
  /** Streams whose max-age is set or being set, most recently used last. */
  private readonly aged = new Map<string, Promise<void>>();
  private subscription: AllStreamSubscription | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private echoCheck: NodeJS.Timeout | null = null;
  private lastReceivedAt = 0;
  private failures = 0;
  private closed = false;

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
    const stream = ephemeralStream(channel);
    await this.ensureMaxAge(stream);
    const data: SignalData = { channel, message };
    await this.deadline(
      this.client.appendToStream(stream, jsonEvent({ type: EVENT_TYPE, data: data as unknown as JSONType }), {
        deadline: this.timeoutMs,
      }),
      `an append to ${stream}`,
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
    this.aged.clear();
    if (this.ownsClient) await this.deadline(this.client.dispose(), 'closing the connection').catch(() => undefined);
  }

  /** Sets the stream's max-age once per process (again after a failure, or once forgotten). */
  private ensureMaxAge(stream: string): Promise<void> {
    let pending = this.aged.get(stream);
    if (pending) {
      this.aged.delete(stream);
      this.aged.set(stream, pending);
      return pending;
    }
    pending = this.deadline(
      this.client.setStreamMetadata(stream, { maxAge: this.maxAgeSeconds }, { deadline: this.timeoutMs }),
      `setting the max age of ${stream}`,
    ).then(
      () => undefined,
      (error) => {
        this.aged.delete(stream);
        throw error;
      },
    );
    this.aged.set(stream, pending);
    if (this.aged.size > MAX_AGED_STREAMS) this.aged.delete(this.aged.keys().next().value as string);
    return pending;
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
      () => this.fail(subscription, new EsdbEphemeralTimeoutError('a subscription to $all (no confirmation)', this.timeoutMs)),
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
        this.fail(subscription, new EsdbEphemeralTimeoutError('the echo of a signal on $all', this.timeoutMs));
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
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EsdbEphemeralTimeoutError(what, this.timeoutMs)), this.timeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }
}
