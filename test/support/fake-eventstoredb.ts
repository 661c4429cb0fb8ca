import { createRequire } from 'node:module';
import type * as Grpc from '@grpc/grpc-js';

// The gRPC library and the generated service definitions the EventStoreDB client itself uses.
const fromClient = createRequire(require.resolve('@eventstore/db-client'));
const grpc = fromClient('@grpc/grpc-js') as typeof Grpc;
/* eslint-disable @typescript-eslint/no-require-imports -- generated CommonJS modules without an entry point of their own */
const { ServerFeaturesService } = fromClient('../generated/serverfeatures_grpc_pb');
const { SupportedMethods, SupportedMethod } = fromClient('../generated/serverfeatures_pb');
const { StreamsService } = fromClient('../generated/streams_grpc_pb');
const { AppendResp } = fromClient('../generated/streams_pb');

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
 * append's answer. Appends succeed at increasing positions unless `append` says otherwise.
 */
export async function startFakeEventStoreDb(
  options: { readonly version?: string | null; readonly append?: (request: FakeAppend) => FakeAppendOutcome } = {},
): Promise<FakeEventStoreDb> {
  const server = new grpc.Server();
  const appends: FakeAppend[] = [];
  const revisions = new Map<string, number>();
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
    read: (call: Grpc.ServerWritableStream<unknown, unknown>) => call.destroy(Object.assign(new Error('not in the fake'), { code: grpc.status.UNIMPLEMENTED })),
    batchAppend: (call: Grpc.ServerDuplexStream<unknown, unknown>) => call.destroy(Object.assign(new Error('not in the fake'), { code: grpc.status.UNIMPLEMENTED })),
    delete: notHere,
    tombstone: notHere,
    append: (call: Grpc.ServerReadableStream<{ getOptions(): { getStreamIdentifier(): { getStreamName_asU8(): Uint8Array } } | undefined }, unknown>, callback: Grpc.sendUnaryData<unknown>) => {
      let streamName = '';
      let events = 0;
      call.on('data', (request) => {
        const options = request.getOptions();
        if (options) streamName = Buffer.from(options.getStreamIdentifier().getStreamName_asU8()).toString('utf8');
        else events++;
      });
      call.on('end', () => {
        const append: FakeAppend = { streamName, events, connectionName: String(call.metadata.get('connection-name')[0] ?? '') };
        appends.push(append);
        const outcome: FakeAppendOutcome = options.append?.(append) ?? { ok: { revision: (revisions.get(streamName) ?? -1) + events, position: (position += 100n) } };
        if (outcome === 'hang') return;
        if ('error' in outcome) {
          const metadata = new grpc.Metadata();
          for (const [key, value] of Object.entries(outcome.error.metadata ?? {})) metadata.set(key, value);
          return callback({ code: outcome.error.code, details: outcome.error.details, metadata });
        }
        revisions.set(streamName, outcome.ok.revision);
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
