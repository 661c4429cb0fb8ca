import { join } from 'node:path';
import { ParleyConfig } from '../config/config';
import { makePrivateDir } from '../shared/files/private-files';
import { EventStore } from '../shared/ports/event-store.port';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { EphemeralBus } from '../shared/ports/ephemeral-bus.port';
import { BlobStore } from '../shared/ports/blob-store.port';
import { RateCounters } from '../shared/ports/rate-counter.port';
import { MemoryRateCounters } from '../adapters/rate-counters/memory/memory-rate-counters';
import { FsBlobStore } from '../adapters/blobs/fs/fs-blob-store';
import { InProcessEphemeralBus } from '../adapters/ephemeral/in-process-ephemeral-bus';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../adapters/read-models/sqlite/sqlite-read-model-store';

export interface Stores {
  readonly events: EventStore;
  readonly readModels: ReadModelStore;
  readonly ephemeral: EphemeralBus;
  readonly blobs: BlobStore;
  readonly rateCounters: RateCounters;
  /** Which adapters were chosen, for the log line at start. */
  readonly description: string;
}

/** EventStoreDB and MongoDB when their addresses are set, each independently; SQLite files otherwise. */
export async function openStores(config: ParleyConfig): Promise<Stores> {
  const needsDir = !config.eventStoreConnectionString || !config.mongodbUri;
  if (needsDir) makePrivateDir(config.dataDir, { tightenExisting: true });
  // The production drivers load only when chosen: the embedded default starts without them.
  const events: EventStore = config.eventStoreConnectionString
    ? new (await import('../adapters/event-store/esdb/esdb-event-store')).EsdbEventStore(config.eventStoreConnectionString)
    : new SqliteEventStore(join(config.dataDir, 'events.sqlite'));
  const readModels: ReadModelStore = config.mongodbUri
    ? await (await import('../adapters/read-models/mongo/mongo-read-model-store')).MongoReadModelStore.connect(
        config.mongodbUri,
        config.mongodbDatabase,
      )
    : new SqliteReadModelStore(join(config.dataDir, 'read-models.sqlite'));
  // Typing and presence cross API processes only where there can be several: with EventStoreDB.
  const ephemeral: EphemeralBus = config.eventStoreConnectionString
    ? new (await import('../adapters/ephemeral/esdb-ephemeral-bus')).EsdbEphemeralBus(config.eventStoreConnectionString)
    : new InProcessEphemeralBus();
  // Uploaded bytes go where the read models go: GridFS beside MongoDB, files in DATA_DIR beside SQLite.
  const blobs: BlobStore = config.mongodbUri
    ? await (await import('../adapters/blobs/gridfs/gridfs-blob-store')).GridFsBlobStore.connect(
        config.mongodbUri,
        config.mongodbDatabase,
      )
    : await FsBlobStore.open(join(config.dataDir, 'blobs'));
  // Rate limits hold per deployment: in memory for the one embedded process, in MongoDB for several API processes.
  const rateCounters: RateCounters = config.mongodbUri
    ? await (await import('../adapters/rate-counters/mongo/mongo-rate-counters')).MongoRateCounters.connect(config.mongodbUri, config.mongodbDatabase)
    : new MemoryRateCounters();
  const description = [
    config.eventStoreConnectionString ? 'event log: EventStoreDB' : `event log: SQLite in ${config.dataDir}`,
    config.mongodbUri ? 'read models: MongoDB' : `read models: SQLite in ${config.dataDir}`,
    config.mongodbUri ? 'blobs: MongoDB GridFS' : `blobs: files in ${join(config.dataDir, 'blobs')}`,
    config.mongodbUri ? 'rate limits: MongoDB' : 'rate limits: in memory',
  ].join(', ');
  return { events, readModels, ephemeral, blobs, rateCounters, description };
}
