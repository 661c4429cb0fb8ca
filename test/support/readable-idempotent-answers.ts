import { join } from 'node:path';
import { IDEMPOTENT_ANSWERS, idempotencyKeysProjection } from '../../projections/idempotency/idempotency-keys.projection';
import { physicalCollection } from '../../projections/projection';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { SecretBox } from '../../src/shared/crypto/secret-box';
import { isSealedFields } from '../../src/shared/crypto/sealed-fields';
import { openMasterSealed } from './master-sealed';
import { openSealedLog } from './sealed-log';

/**
 * Every stored answer of an idempotent write that a stopped server's data directory can still
 * open, with nothing but itself (`master.key`, or MASTER_KEY, and `keys.sqlite`): what its
 * master key opens and what its remaining data keys open, as texts for a byte scan.
 */
export async function readableIdempotentAnswers(dataDir: string, masterKey = process.env.MASTER_KEY): Promise<Record<string, string>> {
  const readModels = new SqliteReadModelStore(join(dataDir, 'read-models.sqlite'));
  const log = openSealedLog(dataDir, masterKey);
  try {
    const documents = await readModels.find<{ _id: string; sealed?: unknown }>(physicalCollection(IDEMPOTENT_ANSWERS, idempotencyKeysProjection.version));
    const box = masterKey ? SecretBox.fromBase64(masterKey) : SecretBox.fromFile(join(dataDir, 'master.key'));
    const readable = openMasterSealed({ 'idempotent answers': JSON.stringify(documents) }, box);
    for (const document of documents) {
      if (!isSealedFields(document.sealed)) continue;
      const opened = await log.openUnderKeys(document.sealed);
      if (opened !== null) readable[`opened under its data keys: idempotent answer ${document._id}`] = opened;
    }
    return readable;
  } finally {
    await log.close();
    await readModels.close();
  }
}
