import { join } from 'node:path';
import { ParleyConfig } from '../config/config';
import { makePrivateDir } from '../shared/files/private-files';
import { EventStore } from '../shared/ports/event-store.port';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { EphemeralBus } from '../shared/ports/ephemeral-bus.port';
import { BlobStore } from '../shared/ports/blob-store.port';
import { RateCounters } from '../shared/ports/rate-counter.port';
import { DataKeyStore } from '../shared/ports/data-key-store.port';
import { SqliteDataKeyStore } from '../adapters/data-keys/sqlite/sqlite-data-key-store';
import { MemoryRateCounters } from '../adapters/rate-counters/memory/memory-rate-counters';
import { FsBlobStore } from '../adapters/blobs/fs/fs-blob-store';
import { InProcessEphemeralBus } from '../adapters/ephemeral/in-process-ephemeral-bus';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { openSqliteReadModels } from './sqlite-read-models';

export interface Stores {
  readonly events: EventStore;
  readonly readModels: ReadModelStore;
  readonly ephemeral: EphemeralBus;
  readonly blobs: BlobStore;
  readonly rateCounters: RateCounters;
  /** The keys personal fields are sealed with in the log (crypto-shredding), kept where the read models are. */
  readonly dataKeys: DataKeyStore;
  /** Which adapters were chosen, for the log line at start. */
  readonly description: string;
}

/**
 * EventStoreDB and MongoDB when their addresses are set, each independently; SQLite files
 * otherwise. A store that fails to open closes the ones opened before it, so a failed start
 * leaves no connection behind.
 */
export async function openStores(config: ParleyConfig): Promise<Stores> {
  const needsDir = !config.eventStoreConnectionString || !config.mongodbUri;
  if (needsDir) makePrivateDir(config.dataDir, { tightenExisting: true });
  const opened: { close(): Promise<void> }[] = [];
  const open = async <T extends { close(): Promise<void> }>(store: T | Promise<T>): Promise<T> => {
    const ready = await store;
    opened.push(ready);
    return ready;
  };
  try {
    // The production drivers load only when chosen: the embedded default starts without them.
    let events: EventStore;
    let ephemeral: EphemeralBus;
    if (config.eventStoreConnectionString) {
      const { connectEventStoreDb } = await import('../adapters/shared/esdb-client');
      const { EsdbEventStore } = await import('../adapters/event-store/esdb/esdb-event-store');
      const { EsdbEphemeralBus } = await import('../adapters/ephemeral/esdb-ephemeral-bus');
      const { migrateEsdbLayout } = await import('../adapters/event-store/esdb/esdb-layout');
      // One client for the process: the event store closes it, after the bus (see Runtime.close).
      const client = await connectEventStoreDb(config.eventStoreConnectionString);
      events = await open(new EsdbEventStore(client));
      await migrateEsdbLayout(client);
      // Typing and presence cross API processes only where there can be several: with EventStoreDB.
      ephemeral = new EsdbEphemeralBus(client);
    } else {
      events = await open(new SqliteEventStore(join(config.dataDir, 'events.sqlite')));
      ephemeral = new InProcessEphemeralBus();
    }
    const readModels = await open<ReadModelStore>(
      config.mongodbUri
        ? (await import('../adapters/read-models/mongo/mongo-read-model-store')).MongoReadModelStore.connect(config.mongodbUri, config.mongodbDatabase)
        : openSqliteReadModels(config.dataDir),
    );
    // After the read models connected (a standalone server is refused there), before anything is written.
    if (config.mongodbUri) await checkMongoLayout(config.mongodbUri, config.mongodbDatabase);
    // Uploaded bytes go where the read models go: GridFS beside MongoDB, files in DATA_DIR beside SQLite.
    const blobs = await open<BlobStore>(
      config.mongodbUri
        ? (await import('../adapters/blobs/gridfs/gridfs-blob-store')).GridFsBlobStore.connect(config.mongodbUri, config.mongodbDatabase)
        : FsBlobStore.open(join(config.dataDir, 'blobs')),
    );
    // Rate limits hold per deployment: in memory for the one embedded process, in MongoDB for several API processes.
    const rateCounters = await open<RateCounters>(
      config.mongodbUri
        ? (await import('../adapters/rate-counters/mongo/mongo-rate-counters')).MongoRateCounters.connect(config.mongodbUri, config.mongodbDatabase)
        : new MemoryRateCounters(),
    );
    // Data keys are as durable as the log they unlock: majority writes in MongoDB, fsynced in DATA_DIR/keys.sqlite.
    const dataKeys = await open<DataKeyStore>(
      config.mongodbUri
        ? (await import('../adapters/data-keys/mongo/mongo-data-key-store')).MongoDataKeyStore.connect(config.mongodbUri, config.mongodbDatabase)
        : new SqliteDataKeyStore(join(config.dataDir, 'keys.sqlite')),
    );
    const description = [
      config.eventStoreConnectionString ? 'event log: EventStoreDB' : `event log: SQLite in ${config.dataDir}`,
      config.mongodbUri ? 'read models: MongoDB' : `read models: SQLite in ${config.dataDir}`,
      config.mongodbUri ? 'blobs: MongoDB GridFS' : `blobs: files in ${join(config.dataDir, 'blobs')}`,
      config.mongodbUri ? 'rate limits: MongoDB' : 'rate limits: in memory',
      config.mongodbUri ? 'data keys: MongoDB' : `data keys: ${join(config.dataDir, 'keys.sqlite')}`,
    ].join(', ');
    return { events, readModels, ephemeral, blobs, rateCounters, dataKeys, description };
  } catch (error) {
    for (const store of opened.reverse()) await store.close().catch(() => undefined);
    throw error;
  }
}

/** The MongoDB database's layout version, checked (and brought forward) before any adapter uses it. */
async function checkMongoLayout(uri: string, dbName: string): Promise<void> {
  const { acquireMongoClient } = await import('../adapters/shared/shared-mongo-client');
  const { migrateMongoLayout } = await import('../adapters/read-models/mongo/mongo-layout');
  const shared = await acquireMongoClient(uri);
  try {
    await migrateMongoLayout(shared.client.db(dbName));
  } finally {
    await shared.release();
  }
}
