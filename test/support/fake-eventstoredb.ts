import { createRequire } from 'node:module';
import type * as Grpc from '@grpc/grpc-js';

// The gRPC library and the generated service definitions the EventStoreDB client itself uses.
const fromClient = createRequire(require.resolve('@eventstore/db-client'));
const grpc = fromClient('@grpc/grpc-js') as typeof Grpc;
/* eslint-disable @typescript-eslint/no-require-imports -- generated CommonJS modules without an entry point of their own */
const { ServerFeaturesService } = fromClient('../generated/serverfeatures_grpc_pb');
const { SupportedMethods, SupportedMethod } = fromClient('../generated/serverfeatures_pb');
const { StreamsService } = fromClient('../generated/streams_grpc_pb');
const { AppendResp, ReadResp } = fromClient('../generated/streams_pb');
const { Empty, StreamIdentifier, UUID } = fromClient('../generated/shared_pb');

/** How the fake answers one append: a success at a position, a gRPC error, or nothing (a hung server). */
export type FakeAppendOutcome =
  | { readonly ok: { readonly revision: number; readonly position: bigint } }
  | { readonly error: { readonly code: Grpc.status; readonly details: string; readonly metadata?: Record<string, string> } }
  | 'hang';

export interface FakeAppend {
  readonly streamName: string;
  /** The `connection-name` the client sends with every call: one per client object. */
  readonly connectionName: string;
  readonly events: number;
}

export interface FakeEventStoreDb {
  readonly connectionString: string;
  /** Appends received (whole requests), in order. */
  readonly appends: FakeAppend[];
  close(): Promise<void>;
}

/**
 * A gRPC server speaking the part of EventStoreDB's protocol a test needs, for what no real
 * server can show here: which version a server says it runs (`version: null` answers as
 * servers before 21.10 do, with no ServerFeatures service), and how the real client reports an
 * append's answer. Appends succeed at increasing positions unless `append` says otherwise, and
 * check their expected revision (none, or a revision) against what the fake stored; reads of
 * one stream answer what it stored (not $all, not subscriptions).
 */
export async function startFakeEventStoreDb(
  options: { readonly version?: string | null; readonly append?: (request: FakeAppend) => FakeAppendOutcome } = {},
): Promise<FakeEventStoreDb> {
  const server = new grpc.Server();
  const appends: FakeAppend[] = [];
  const revisions = new Map<string, number>();
  /** What appends that succeeded wrote, by stream. */
  const stored = new Map<string, { id: string; type: string; contentType: string; data: Uint8Array; revision: number; position: bigint }[]>();
  let position = 1_000n;
  const version = options.version === undefined ? '23.10.1.0' : options.version;

  server.addService(ServerFeaturesService, {
    getSupportedMethods: (_call: unknown, callback: Grpc.sendUnaryData<unknown>) => {
      if (version === null) return callback({ code: grpc.status.UNIMPLEMENTED, details: 'unknown service' });
      const methods = new SupportedMethods();
      methods.setEventStoreServerVersion(version);
      for (const name of ['read', 'append', 'batchappend']) {
        methods.addMethods(new SupportedMethod().setServiceName('event_store.client.streams.streams').setMethodName(name));
      }
      callback(null, methods);
    },
  });

  const notHere = (_call: unknown, callback: Grpc.sendUnaryData<unknown>) => callback({ code: grpc.status.UNIMPLEMENTED, details: 'not in the fake' });
  server.addService(StreamsService, {
    read: (call: Grpc.ServerWritableStream<any, unknown>) => {
      const options = call.request.getOptions();
      const stream = options.getStream();
      if (!stream) return call.destroy(Object.assign(new Error('only reads of one stream are in the fake'), { code: grpc.status.UNIMPLEMENTED }));
      const name = Buffer.from(stream.getStreamIdentifier().getStreamName_asU8()).toString('utf8');
      const events = stored.get(name);
      if (!events) {
        call.write(new ReadResp().setStreamNotFound(new ReadResp.StreamNotFound().setStreamIdentifier(new StreamIdentifier().setStreamName(Buffer.from(name)))));
        return call.end();
      }
      const backwards = options.getReadDirection() === 1;
      const from = stream.hasRevision() ? Number(stream.getRevision()) : backwards ? events.length - 1 : 0;
      const ordered = backwards ? events.slice(0, from + 1).reverse() : events.slice(from);
      for (const event of ordered.slice(0, Number(options.getCount()))) {
        const recorded = new ReadResp.ReadEvent.RecordedEvent()
          .setId(new UUID().setString(event.id))
          .setStreamIdentifier(new StreamIdentifier().setStreamName(Buffer.from(name)))
          .setStreamRevision(String(event.revision))
          .setPreparePosition(String(event.position))
          .setCommitPosition(String(event.position))
          .setData(event.data);
        recorded.getMetadataMap().set('type', event.type).set('content-type', event.contentType).set('created', '638000000000000000');
        call.write(new ReadResp().setEvent(new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(String(event.position))));
      }
      call.end();
    },
    batchAppend: (call: Grpc.ServerDuplexStream<unknown, unknown>) => call.destroy(Object.assign(new Error('not in the fake'), { code: grpc.status.UNIMPLEMENTED })),
    delete: notHere,
    tombstone: notHere,
    append: (call: Grpc.ServerReadableStream<any, unknown>, callback: Grpc.sendUnaryData<unknown>) => {
      let streamName = '';
      let events = 0;
      /** The revision the append expects: a number, 'no_stream', or null for any. */
      let expected: number | 'no_stream' | null = null;
      const proposed: { id: string; type: string; contentType: string; data: Uint8Array }[] = [];
      call.on('data', (request) => {
        const options = request.getOptions();
        if (options) {
          streamName = Buffer.from(options.getStreamIdentifier().getStreamName_asU8()).toString('utf8');
          expected = options.hasRevision() ? Number(options.getRevision()) : options.hasNoStream() ? 'no_stream' : null;
          return;
        }
        events++;
        const message = request.getProposedMessage();
        const metadata = message.getMetadataMap();
        proposed.push({ id: message.getId().getString(), type: metadata.get('type'), contentType: metadata.get('content-type'), data: message.getData_asU8() });
      });
      call.on('end', () => {
        const append: FakeAppend = { streamName, events, connectionName: String(call.metadata.get('connection-name')[0] ?? '') };
        appends.push(append);
        const current = stored.get(streamName)?.length ?? 0;
        if (!options.append && expected !== null && expected !== (current === 0 ? 'no_stream' : current - 1)) {
          const wrong = new AppendResp.WrongExpectedVersion();
          if (current === 0) wrong.setCurrentNoStream(new Empty());
          else wrong.setCurrentRevision(String(current - 1));
          if (expected === 'no_stream') wrong.setExpectedNoStream(new Empty());
          else wrong.setExpectedRevision(String(expected));
          return callback(null, new AppendResp().setWrongExpectedVersion(wrong));
        }
        const outcome: FakeAppendOutcome = options.append?.(append) ?? { ok: { revision: (revisions.get(streamName) ?? -1) + events, position: (position += 100n) } };
        if (outcome === 'hang') return;
        if ('error' in outcome) {
          const metadata = new grpc.Metadata();
          for (const [key, value] of Object.entries(outcome.error.metadata ?? {})) metadata.set(key, value);
          return callback({ code: outcome.error.code, details: outcome.error.details, metadata });
        }
        revisions.set(streamName, outcome.ok.revision);
        const kept = stored.get(streamName) ?? [];
        for (const event of proposed) kept.push({ ...event, revision: kept.length, position: outcome.ok.position });
        stored.set(streamName, kept);
        const success = new AppendResp.Success();
        success.setCurrentRevision(String(outcome.ok.revision));
        success.setPosition(new AppendResp.Position().setCommitPosition(String(outcome.ok.position)).setPreparePosition(String(outcome.ok.position)));
        callback(null, new AppendResp().setSuccess(success));
      });
    },
  });

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    connectionString: `esdb://127.0.0.1:${port}?tls=false`,
    appends,
    close: async () => server.forceShutdown(),
  };
}
