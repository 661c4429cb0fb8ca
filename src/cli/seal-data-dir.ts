import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ParleyConfig, ConfigError } from '../config/config';
import { DataDirLock } from '../infrastructure/data-dir-lock';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { rewriteEventData, StoredEventRow } from '../adapters/event-store/sqlite/rewrite-event-data';
import { SqliteDataKeyStore } from '../adapters/data-keys/sqlite/sqlite-data-key-store';
import { openReadModelDatabase } from '../adapters/read-models/sqlite/schema';
import { readModelFiles } from '../infrastructure/sqlite-read-models';
import { compactSqliteFile } from '../adapters/shared/sqlite-compaction';
import { personalDataRulesFor } from '../app/personal-data-rules';
import { openMasterKey } from '../shared/crypto/master-key';
import { DataKeyRing } from '../shared/crypto/data-key-ring';
import { DataKeySelector, DataKeyStore } from '../shared/ports/data-key-store.port';
import { PlaintextSealer } from '../shared/application/operations/plaintext-sealer';
import { SealingEventStore } from '../shared/application/operations/sealing-event-store';
import { ShredSweep } from '../shared/application/operations/shred-sweep';

/** What one run of `data-dir:seal` did. */
export interface DataDirSealReport {
  readonly eventsRead: number;
  readonly eventsSealed: number;
  readonly deletesReplayed: number;
  readonly keysDestroyed: number;
}

/** The key store, counting the keys its destroys take. */
function countingDestroys(store: DataKeyStore): DataKeyStore & { destroyed: number } {
  const counted = {
    destroyed: 0,
    create: store.create.bind(store),
    getMany: store.getMany.bind(store),
    close: store.close.bind(store),
    async destroy(selector: DataKeySelector) {
      const n = await store.destroy(selector);
      counted.destroyed += n;
      return n;
    },
  };
  return counted;
}

/** Keys the shred pass keeps in memory (it reads each delete's keys once). */
const SHRED_PASS_CACHE = 1_000;

/** The shred sweep's checkpoint for a pass over the whole log, kept nowhere: every delete is replayed. */
const fromTheStart = () => ({ getCheckpoint: async () => null, applyBatch: async () => undefined });

/**
 * Rewrites an embedded data directory into the sealed form, offline (it takes DATA_DIR's lock,
 * so it refuses while a server runs on it, and no server starts meanwhile):
 * 1. every event written before sealing whose type has a personal-data rule is sealed as an
 *    append seals it today, with keys made in keys.sqlite first (PlaintextSealer), in one
 *    transaction of the log, which is then compacted (its plaintext overwritten, WAL emptied);
 * 2. every delete in the log destroys what it destroys (the shred sweep over the whole log):
 *    the content of what was deleted before sealing is gone with its new keys;
 *    keys.sqlite is then compacted (the destroyed keys overwritten, its WAL emptied);
 * 3. the read models' file is compacted too (files written before `secure_delete` keep deleted
 *    content in their pages' free space).
 * Each step can be run again: a run killed at any point is finished by the next one, and a
 * run on a sealed directory seals nothing and destroys nothing.
 */
export async function sealDataDir(config: ParleyConfig, progress: (line: string) => void): Promise<DataDirSealReport> {
  if (config.eventStoreConnectionString || config.mongodbUri) {
    throw new ConfigError(
      'data-dir:seal rewrites an embedded data directory (DATA_DIR, its log and keys in SQLite): unset EVENTSTORE_CONNECTION_STRING and MONGODB_URI. ' +
        "EventStoreDB's events are immutable: a log there written before sealing is sealed by an export imported into a new one.",
    );
  }
  const eventsFile = join(config.dataDir, 'events.sqlite');
  if (!existsSync(eventsFile)) throw new ConfigError(`DATA_DIR ${config.dataDir} holds no event log (events.sqlite): there is nothing to seal`);
  const lock = DataDirLock.acquire(config.dataDir);
  let keyFile: SqliteDataKeyStore | undefined;
  try {
    // A destroy's own WAL truncation is one durable write; here the whole pass is followed by one compaction of keys.sqlite.
    keyFile = new SqliteDataKeyStore(join(config.dataDir, 'keys.sqlite'), { emptyWalAfterEachDestroy: false });
    const keyStore = countingDestroys(keyFile);
    const check = new SqliteEventStore(eventsFile);
    const box = await openMasterKey(config, check).finally(() => check.close());
    const ring = new DataKeyRing(keyStore, box, { ...config.dataKeyCache, exclusive: true });

    const rules = personalDataRulesFor(config);
    const sealer = new PlaintextSealer(ring, rules.sealing);
    const rewritten = await rewriteEventData(
      eventsFile,
      async (rows: readonly StoredEventRow[], history) => {
        const page = rows.map((row) => ({ streamName: row.stream, type: row.type, data: JSON.parse(row.data) as unknown, recordedAt: row.recorded_at }));
        const sealed = await sealer.seal(page, history);
        return new Map([...sealed].map(([index, data]) => [rows[index].position, JSON.stringify(data)]));
      },
      ({ read, rewritten }) => progress(`sealing events.sqlite: ${read} events read, ${rewritten} sealed`),
    );

    progress("events.sqlite rewritten and compacted; replaying the log's deletes");
    // A ring of its own with a small cache: each destroy looks through the cache for what to forget.
    const shredRing = new DataKeyRing(keyStore, box, { ...config.dataKeyCache, size: SHRED_PASS_CACHE, exclusive: true });
    const log = new SealingEventStore(new SqliteEventStore(eventsFile), shredRing, rules);
    let deletesReplayed: number;
    try {
      deletesReplayed = await new ShredSweep(log, fromTheStart()).pass();
    } finally {
      await log.close();
    }
    await keyFile.compact();
    progress(`replayed ${deletesReplayed} deletes of the log: ${keyStore.destroyed} data keys destroyed`);

    for (const file of readModelFiles()) {
      const readModelsFile = join(config.dataDir, file);
      if (!existsSync(readModelsFile)) continue;
      const db = openReadModelDatabase(readModelsFile);
      try {
        compactSqliteFile(db, readModelsFile);
      } finally {
        db.close();
      }
    }
    return { eventsRead: rewritten.read, eventsSealed: rewritten.rewritten, deletesReplayed, keysDestroyed: keyStore.destroyed };
  } finally {
    await keyFile?.close();
    lock.release();
  }
}
