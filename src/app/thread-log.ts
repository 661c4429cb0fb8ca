import { join } from 'node:path';
import { SqliteDataKeyStore } from '../adapters/data-keys/sqlite/sqlite-data-key-store';
import { SqliteEventStore, SqliteEventStoreOptions } from '../adapters/event-store/sqlite/sqlite-event-store';
import { SealingEventStore } from '../shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../shared/crypto/data-key-ring';
import { openMasterKey } from '../shared/crypto/master-key';
import type { SecretBox } from '../shared/crypto/secret-box';
import type { ProjectorThreadConfig } from './projector-thread/protocol';
import { personalDataRulesFor } from './personal-data-rules';

/** A worker thread's own connections to DATA_DIR's log and key store, and the log it reads through them. */
export interface ThreadLog {
  readonly events: SqliteEventStore;
  readonly dataKeys: SqliteDataKeyStore;
  readonly secretBox: SecretBox;
  /** Not exclusive: the request thread destroys keys (a thread is told, and the cache's TTL bounds the rest). */
  readonly ring: DataKeyRing;
  /** The log, its sealed events opened with `ring`. */
  readonly log: SealingEventStore;
  close(): Promise<void>;
}

/** Opens a thread's log (the projector thread's, a rebuild's fold thread's); on a failure, closes what it opened. */
export async function openThreadLog(config: ProjectorThreadConfig, options: SqliteEventStoreOptions = {}): Promise<ThreadLog> {
  const events = new SqliteEventStore(join(config.dataDir, 'events.sqlite'), options);
  const dataKeys = new SqliteDataKeyStore(join(config.dataDir, 'keys.sqlite'));
  const close = async () => {
    await events.close();
    await dataKeys.close();
  };
  try {
    const secretBox = await openMasterKey(config, events);
    const ring = new DataKeyRing(dataKeys, secretBox, { ...config.dataKeyCache, exclusive: false });
    return { events, dataKeys, secretBox, ring, log: new SealingEventStore(events, ring, personalDataRulesFor(config)), close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
