import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../src/adapters/data-keys/sqlite/sqlite-data-key-store';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { PERSONAL_DATA_RULES } from '../../src/app/personal-data-rules';
import { SealingEventStore } from '../../src/shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../../src/shared/crypto/data-key-ring';
import { SecretBox } from '../../src/shared/crypto/secret-box';

/**
 * A data directory's event log as the server reads it: personal fields opened with its data
 * keys (`keys.sqlite`, opened with MASTER_KEY or `master.key`), for a test that checks what
 * the log holds. Close it before the directory is removed.
 */
export function openSealedLog(dataDir: string, masterKey = process.env.MASTER_KEY): SealingEventStore & { close(): Promise<void> } {
  const events = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  const keys = new SqliteDataKeyStore(join(dataDir, 'keys.sqlite'));
  const box = masterKey ? SecretBox.fromBase64(masterKey) : SecretBox.fromFile(join(dataDir, 'master.key'));
  const log = new SealingEventStore(events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
  const close = log.close.bind(log);
  log.close = async () => {
    await close();
    await keys.close();
  };
  return log;
}
