import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../config/config';
import { EventStore } from '../ports/event-store.port';
import { SealedSecret, SecretBox } from './secret-box';

/** Where the master key comes from: MASTER_KEY, otherwise `<dataDir>/master.key`. */
export interface MasterKeySettings {
  readonly masterKey?: string;
  readonly dataDir: string;
}

/**
 * The oldest sealed key secret in the log (the instances context's `KeyCreated` carries one),
 * or null when no key was ever created. Keys are created before any authenticated traffic,
 * so the read stops near the start of the log.
 */
async function oldestSealedSecret(log: EventStore): Promise<SealedSecret | null> {
  const [event] = await log.readAll({ maxCount: 1, filter: { eventTypes: ['KeyCreated'] } });
  return event ? ((event.data as { secret: SealedSecret }).secret ?? null) : null;
}

/**
 * Opens the master key and proves it against the log before anything is written: a key that
 * does not open the stored secrets would answer every authenticated call with an error, and a
 * key file generated beside sealed secrets would make them unreadable for good. Works through
 * the event store port, so it checks EventStoreDB as well as the SQLite log.
 */
export async function openMasterKey(settings: MasterKeySettings, log: EventStore): Promise<SecretBox> {
  const sealed = await oldestSealedSecret(log);
  const file = join(settings.dataDir, 'master.key');
  let box: SecretBox;
  let which: string;
  if (settings.masterKey) {
    box = SecretBox.fromBase64(settings.masterKey);
    which = 'MASTER_KEY is';
  } else if (existsSync(file)) {
    box = SecretBox.fromFile(file);
    which = `MASTER_KEY is not set and ${file} is`;
  } else if (sealed) {
    throw new ConfigError(
      `The event log holds key secrets sealed with a master key, but MASTER_KEY is not set and ${file} does not exist: ` +
        'set MASTER_KEY to the key they were sealed with (or restore master.key). No new key was generated: it would leave every stored key unusable.',
    );
  } else {
    return SecretBox.createFile(file);
  }
  if (sealed && !box.opens(sealed)) {
    throw new ConfigError(
      `${which} not the master key the event log's key secrets were sealed with: ` +
        'set MASTER_KEY to that key (or restore the master.key beside them). Nothing was written.',
    );
  }
  return box;
}
