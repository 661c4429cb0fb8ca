import { AppendExpectedRevision, AppendResult, DeadlineExceededError, EventData, EventStoreDBClient } from '@eventstore/db-client';
// The client's own single-call append: what appendToStream does when given credentials or
// when the server has no batch append (see appendUnbatched).
import { append } from '@eventstore/db-client/dist/streams/appendToStream/append';

/** A call the server did not answer in time. For an append, whether it was written is unknown. */
export class EsdbTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`EventStoreDB did not answer ${what} within ${ms} ms`);
    this.name = 'EsdbTimeoutError';
  }
}

/** The server is one Parley cannot use; the message says which version is needed. */
export class EsdbUnsupportedServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EsdbUnsupportedServerError';
  }
}

/**
 * The oldest server Parley runs against: reads of a stream report their events' log positions
 * only from 22.6 on (older servers send 2^64-1 for each, so a write could never be matched to
 * what the projectors have folded).
 */
export const MIN_SERVER_VERSION: readonly [number, number] = [22, 6];

/**
 * The one EventStoreDB client of a process, shared by the event store and the ephemeral bus,
 * once the server has said which version it runs (older than MIN_SERVER_VERSION is refused).
 * One client means one connection whose failures concern only its own calls.
 */
export async function connectEventStoreDb(connectionString: string, options: { readonly timeoutMs?: number } = {}): Promise<EventStoreDBClient> {
  const client = EventStoreDBClient.connectionString(connectionString);
  try {
    await requireSupportedServer(client, options.timeoutMs ?? 10_000);
    return client;
  } catch (error) {
    await withTimeout(client.dispose(), 1_000, 'closing the connection').catch(() => undefined);
    if (error instanceof EsdbUnsupportedServerError) throw error;
    // The connection string is not repeated: it may hold credentials.
    throw new Error(`could not reach EventStoreDB (EVENTSTORE_CONNECTION_STRING): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** Asks the server its version (the ServerFeatures call every client makes once) and refuses one older than MIN_SERVER_VERSION. */
export async function requireSupportedServer(client: EventStoreDBClient, timeoutMs: number): Promise<void> {
  // The client asks once and keeps the answer; `capabilities` is not part of its typed surface.
  const features = await withTimeout((client as unknown as { capabilities: Promise<{ serverVersion: string }> }).capabilities, timeoutMs, 'the request for its version');
  const version = features.serverVersion;
  if (!supportedServerVersion(version)) {
    const [major, minor] = MIN_SERVER_VERSION;
    throw new EsdbUnsupportedServerError(
      `EventStoreDB ${version === 'unknown' ? 'older than 21.10 (it does not say its version)' : version} is too old: Parley needs ${major}.${minor} or newer, ` +
        'whose stream reads report log positions. Upgrade the server (docker-compose.yml runs 23.10).',
    );
  }
}

/** Whether a server version string (`23.10.1.0`; `unknown` from servers before 21.10) is MIN_SERVER_VERSION or newer. */
export function supportedServerVersion(version: string): boolean {
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > MIN_SERVER_VERSION[0] || (major === MIN_SERVER_VERSION[0] && minor >= MIN_SERVER_VERSION[1]);
}

/**
 * Appends through one call of its own, never through the client's shared batch-append stream.
 * Client 6.2.1 keeps the pending batch appends of every client and every stream in one
 * process-wide map: when one batch stream fails (a client disposed, or the old connection after
 * the client has reconnected), it rejects the appends of the others, which may still be
 * written, and their late replies then throw a TypeError from a stream listener that kills the
 * process (fixed only in the renamed KurrentDB client). A call of its own fails alone.
 */
export function appendUnbatched(
  client: EventStoreDBClient,
  streamName: string,
  events: EventData[],
  options: { readonly expectedRevision: AppendExpectedRevision; readonly deadline: number },
): Promise<AppendResult> {
  return append.call(client, streamName, events, { ...options, batchAppendSize: Number.MAX_SAFE_INTEGER });
}

/**
 * Rejects with EsdbTimeoutError when the promise has not settled within `ms`. A call given the
 * same `ms` as its gRPC deadline may fail with the client's DeadlineExceededError first (on a
 * busy machine the two timers race): that is the same "did not answer in time", said the same way.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EsdbTimeoutError(what, ms)), ms);
  });
  const answered = promise.catch((error: unknown) => {
    throw error instanceof DeadlineExceededError ? new EsdbTimeoutError(what, ms) : error;
  });
  return Promise.race([answered, timeout]).finally(() => clearTimeout(timer));
}
