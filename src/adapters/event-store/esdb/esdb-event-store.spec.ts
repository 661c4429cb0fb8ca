import {
  CancelledError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
  UnknownError,
} from '@eventstore/db-client';
import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { DomainError } from '../../../shared/domain/errors';
import { AppendOutcomeUnknownError, AppendTooLargeError, EventStoreUnavailableError } from '../../../shared/ports/event-store.port';
import { FakeAppendOutcome, startFakeEventStoreDb } from '../../../../test/support/fake-eventstoredb';
import { EsdbEphemeralBus } from '../../ephemeral/esdb-ephemeral-bus';
import { connectEventStoreDb, EsdbUnsupportedServerError, supportedServerVersion } from '../../shared/esdb-client';
import { EsdbEventStore, EsdbTimeoutError } from './esdb-event-store';
import { appendFailure } from './esdb-append-errors';

/**
 * The adapters against an endpoint that accepts TCP and never answers (a hung server, a
 * half-open proxy): the client itself would wait forever, so every call must fail within the
 * adapter's own timeout. Runs everywhere: no EventStoreDB needed, only a real socket.
 */
describe('EventStoreDB adapters against a silent endpoint', () => {
  let server: Server;
  let sockets: Socket[];
  let connectionString: string;
  const timeoutMs = 400;

  beforeAll(async () => {
    sockets = [];
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    connectionString = `esdb://127.0.0.1:${(server.address() as AddressInfo).port}?tls=false`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('every call of the event store rejects in time (an append as "outcome unknown", it was sent); close() still returns', async () => {
    const store = new EsdbEventStore(connectionString, { timeoutMs });
    try {
      const event = { type: 'Happened', data: {}, metadata: { occurred_at: new Date().toISOString() } };
      const appended = await settles(store.append('ct-silent', [event], 'any')).catch((e: unknown) => e);
      expect(appended).toBeInstanceOf(AppendOutcomeUnknownError);
      expect(appended).toMatchObject({ foundMeansKept: true, reason: 'EventStoreDB did not confirm the write in time' });
      expect((appended as Error).cause).toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.readStream('ct-silent'))).rejects.toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.readAll({ maxCount: 10 }))).rejects.toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.headPosition())).rejects.toBeInstanceOf(EsdbTimeoutError);
      // A subscription that is never confirmed throws out of the consumer's loop, for both kinds.
      for (const subscription of [store.subscribeToAll(), store.subscribeToStream('ct-silent')]) {
        const consumed = (async () => {
          for await (const _ of subscription) throw new Error('a silent endpoint delivered an event');
        })();
        await expect(settles(consumed)).rejects.toBeInstanceOf(EsdbTimeoutError);
      }
    } finally {
      await settles(store.close());
    }
  });

  it('connecting asks the server its version, and gives up in time on one that never answers', async () => {
    await expect(settles(connectEventStoreDb(connectionString, { timeoutMs }))).rejects.toThrow(
      /^could not reach EventStoreDB \(EVENTSTORE_CONNECTION_STRING\): EventStoreDB did not answer the request for its version within 400 ms$/,
    );
  });

  it('the ephemeral bus: publish rejects in time, and close() returns', async () => {
    const errors: unknown[] = [];
    const bus = new EsdbEphemeralBus(connectionString, { timeoutMs, onError: (e) => errors.push(e) });
    try {
      const unsubscribe = bus.subscribe('typing:acme:r1', () => undefined);
      await expect(settles(bus.publish('typing:acme:r1', { user: 'alice' }))).rejects.toThrow(/did not answer/);
      unsubscribe();
    } finally {
      await settles(bus.close());
    }
  });
});

/** Fails the test if the promise does not settle within a generous bound: the point is that it settles. */
const settles = <T>(promise: Promise<T>): Promise<T> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting after 10 s')), 10_000).unref())]);

const event = () => ({ type: 'Happened', data: { n: 1 }, metadata: { occurred_at: new Date().toISOString() } });

describe('EventStoreDB appends: what a failure says about the write', () => {
  it("maps the client's errors: refusals wrote nothing, timeouts and failed calls may still land", () => {
    const unknown = (error: Error) => {
      const mapped = appendFailure(error, 's-1', 10);
      expect(mapped).toBeInstanceOf(AppendOutcomeUnknownError);
      return (mapped as AppendOutcomeUnknownError).foundMeansKept && (mapped as AppendOutcomeUnknownError).reason;
    };
    // The server's commit timeout (ABORTED), the call's deadline, the adapter's own timer.
    expect(unknown(new TimeoutError())).toBe('EventStoreDB did not confirm the write in time');
    expect(unknown(new DeadlineExceededError())).toBe('EventStoreDB did not confirm the write in time');
    expect(unknown(new EsdbTimeoutError('an append to s-1', 10_000))).toBe('EventStoreDB did not confirm the write in time');
    // A connection that failed, or a call cancelled, once the request may have left.
    const dropped = { code: 14, details: 'Connection dropped', message: '14 UNAVAILABLE: Connection dropped' } as never;
    expect(unknown(new UnavailableError(dropped))).toBe('the connection to EventStoreDB failed during the write');
    expect(unknown(new CancelledError({ code: 1, details: 'Cancelled', message: '1 CANCELLED: Cancelled' } as never))).toBe(
      'the connection to EventStoreDB failed during the write',
    );
    expect(unknown(new UnknownError())).toBe('the connection to EventStoreDB failed during the write');

    const neverSent = { code: 14, details: 'No connection established. Last error: connect ECONNREFUSED', message: '14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED' } as never;
    expect(appendFailure(new UnavailableError(neverSent), 's-1', 10)).toEqual(new EventStoreUnavailableError('EventStoreDB is unreachable'));
    const tooLarge = appendFailure(MaxAppendSizeExceededError.fromMaxAppendSize(1_048_576), 's-1', 1_048_600);
    expect(tooLarge).toBeInstanceOf(AppendTooLargeError);
    expect(tooLarge).toMatchObject({ streamName: 's-1', maxBytes: 1_048_576, bytes: 1_048_600 });
    const deleted = appendFailure(StreamDeletedError.fromStreamName('s-1'), 's-1', 10);
    expect(deleted).toBeInstanceOf(DomainError);
    expect((deleted as DomainError).code).toBe('conflict/stream_deleted');
  });

  it('through the client, from a server speaking the protocol: a commit timeout, an unanswered call, a size limit', async () => {
    const outcomes = new Map<string, FakeAppendOutcome>([
      ['timed-out', { error: { code: 10, details: 'Operation timed out' } }], // ABORTED: EventStoreDB's PrepareTimeout/CommitTimeout
      ['hung', 'hang'],
      ['too-large', { error: { code: 3, details: 'Maximum Append Size of 4096 Exceeded.', metadata: { exception: 'maximum-append-size-exceeded', 'maximum-append-size': '4096' } } }],
    ]);
    const fake = await startFakeEventStoreDb({ append: ({ streamName }) => outcomes.get(streamName) ?? { ok: { revision: 0, position: 4242n } } });
    // Long enough for a loaded machine to answer the calls that succeed; the hung one waits it out.
    const store = await EsdbEventStore.connect(fake.connectionString, { timeoutMs: 2_000 });
    try {
      expect(await store.append('fine', [event()], 'no_stream')).toEqual({ nextExpectedRevision: 0, position: '00000000000000004242:00000000000000004242' });
      for (const stream of ['timed-out', 'hung']) {
        const failure = await settles(store.append(stream, [event()], 'any')).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(AppendOutcomeUnknownError);
        expect(failure).toMatchObject({ reason: 'EventStoreDB did not confirm the write in time', foundMeansKept: true });
      }
      expect(store.maxAppendBytes).toBe(1024 * 1024);
      const refused = await store.append('too-large', [event()], 'any').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AppendTooLargeError);
      expect(refused).toMatchObject({ maxBytes: 4096 });
      // The server's limit is learnt: grouped writes keep under it from now on.
      expect(store.maxAppendBytes).toBe(4096);
    } finally {
      await store.close();
      await fake.close();
    }
  });

  it('with no server listening, an append was never sent: "unreachable", nothing written', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = new EsdbEventStore(`esdb://127.0.0.1:${port}?tls=false`, { timeoutMs: 2_000 });
    try {
      const failure = await settles(gone.append('fine', [event()], 'any')).catch((e: unknown) => e);
      expect(failure).toEqual(new EventStoreUnavailableError('EventStoreDB is unreachable'));
    } finally {
      await gone.close();
    }
  });
});

describe('EventStoreDB server versions', () => {
  it('refuses a server older than 22.6 (no positions on stream reads), with the version it found', async () => {
    for (const [version, message] of [
      ['22.5.0.0', /EventStoreDB 22\.5\.0\.0 is too old: Parley needs 22\.6 or newer/],
      ['21.10.7.0', /EventStoreDB 21\.10\.7\.0 is too old/],
      [null, /EventStoreDB older than 21\.10 \(it does not say its version\) is too old/],
    ] as const) {
      const fake = await startFakeEventStoreDb({ version });
      try {
        const refused = await settles(connectEventStoreDb(fake.connectionString)).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(EsdbUnsupportedServerError);
        expect((refused as Error).message).toMatch(message);
      } finally {
        await fake.close();
      }
    }
    const fake = await startFakeEventStoreDb({ version: '23.10.1.0' });
    try {
      await (await connectEventStoreDb(fake.connectionString)).dispose();
    } finally {
      await fake.close();
    }
  });

  it('reads versions as major.minor', () => {
    expect(['22.6.0.0', '22.10.1.0', '23.10.1.0', '24.10.0.1', '25.0.0.1700'].every(supportedServerVersion)).toBe(true);
    expect(['22.5.0.0', '21.10.0.0', '20.10.5.0', 'unknown', ''].some(supportedServerVersion)).toBe(false);
  });
});

/** A resolved event as the client delivers it (`created` by the server, one second into 2026 unless given). */
const resolved = (streamId: string, type: string, revision: number, commit: bigint, created = new Date('2026-01-01T00:00:01.000Z')) => ({
  event: {
    streamId,
    id: `00000000-0000-7000-8000-${String(commit).padStart(12, '0')}`,
    revision: BigInt(revision),
    type,
    data: {},
    metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
    isJson: true,
    contentType: 'application/json',
    created,
    position: { commit, prepare: commit },
  },
});
type Resolved = ReturnType<typeof resolved>;

/**
 * The client's reads over a log held in memory, with its semantics (forward reads of $all
 * include `fromPosition`), counting the calls: each is a round trip to a real server.
 */
function readingClient(log: Resolved[]) {
  const calls: { maxCount: number }[] = [];
  const readableOf = (items: Resolved[]) => Object.assign(Readable.from(items), { cancel: async () => undefined });
  return {
    calls,
    client: {
      readAll: ({ fromPosition, maxCount, direction }: { fromPosition: 'start' | 'end' | { commit: bigint }; maxCount: number; direction?: 'forwards' | 'backwards' }) => {
        calls.push({ maxCount });
        if (direction === 'backwards') {
          // Backwards from a position includes it, as forwards reads do (the adapter skips it either way).
          const from = fromPosition === 'end' ? 2n ** 64n : (fromPosition as { commit: bigint }).commit;
          return readableOf(log.filter((r) => r.event.position.commit <= from).reverse().slice(0, maxCount));
        }
        const from = fromPosition === 'start' ? -1n : (fromPosition as { commit: bigint }).commit;
        return readableOf(log.filter((r) => r.event.position.commit >= from).slice(0, maxCount));
      },
      readStream: (streamName: string) => readableOf(log.filter((r) => r.event.streamId === streamName)),
      dispose: async () => undefined,
    },
  };
}

describe('EventStoreDB reads of $all', () => {
  it('a tail of signals costs a few pages, not a round trip each (readAll with maxCount 1, as /health asks)', async () => {
    const log = [resolved('room-acme.r1', 'RoomCreated', 0, 100n)];
    for (let i = 0; i < 2_000; i++) log.push(resolved(`ephemeral-${i % 3}`, 'EphemeralSignal', Math.floor(i / 3), 200n + BigInt(i)));
    log.push(resolved('room-acme.r1', 'MessageSent', 1, 5_000n));
    const { client, calls } = readingClient(log);
    const store = new EsdbEventStore(client as never, { pageSize: 500 });
    const [next] = await store.readAll({ after: '00000000000000000100:00000000000000000100', maxCount: 1 });
    expect(next).toMatchObject({ type: 'MessageSent', position: '00000000000000005000:00000000000000005000' });
    expect(calls.length).toBeLessThanOrEqual(8);
    expect(Math.max(...calls.map((c) => c.maxCount))).toBe(501);
  });

  it('a replay from a time starts after the last event recorded before it, read backwards from the end: the events after it, not the log before', async () => {
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
    const log: Resolved[] = [];
    for (let i = 0; i < 3_000; i++) log.push(resolved(`room-acme.r${i}`, 'RoomCreated', 0, 100n + BigInt(i), at(i)));
    // Signals between the last events: never a position a replay starts from.
    for (let i = 0; i < 50; i++) log.push(resolved(`ephemeral-${i}`, 'EphemeralSignal', 0, 4_000n + BigInt(i), at(2_998)));
    log.push(resolved('room-acme.r1', 'MessageSent', 1, 5_000n, at(3_000)));
    const { client, calls } = readingClient(log);
    const store = new EsdbEventStore(client as never, { pageSize: 500 });
    const position = (commit: bigint) => `${String(commit).padStart(20, '0')}:${String(commit).padStart(20, '0')}`;
    expect(await store.positionBeforeTime(at(2_999).toISOString())).toEqual({ before: position(100n + 2_998n) });
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(await store.positionBeforeTime(at(3_000).toISOString())).toEqual({ before: position(100n + 2_999n) });
    expect(await store.positionBeforeTime(at(3_001).toISOString())).toEqual({ before: position(5_000n) });
    expect(await store.positionBeforeTime(at(0).toISOString())).toEqual({ before: null });
  });

  it('a stream event without a position (servers before 22.6 send 2^64-1) reads as having none, never as the end of the log', async () => {
    const none = 2n ** 64n - 1n;
    const { client } = readingClient([resolved('room-acme.r1', 'RoomCreated', 0, none)]);
    const [event] = await new EsdbEventStore(client as never).readStream('room-acme.r1');
    expect(event.position).toBe('');
  });

  it('a checkpoint of another log is refused with what to do, and known as foreign', async () => {
    const store = new EsdbEventStore(readingClient([]).client as never);
    expect(store.recognizes('00000000000000000100:00000000000000000100')).toBe(true);
    expect(store.recognizes('00000000000000000042')).toBe(false);
    await expect(store.readAll({ after: '00000000000000000042' })).rejects.toThrow(
      /"00000000000000000042" is not a position of an EventStoreDB log: the read models were folded from another event log\. Rebuild them from this one/,
    );
  });
});
