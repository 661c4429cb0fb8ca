import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { readModelStoreContract } from './read-model-store.contract';

readModelStoreContract('SqliteReadModelStore', async (options) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-contract-'));
  const store = new SqliteReadModelStore(join(dir, 'read-models.db'), options);
  return { store, cleanup: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
});
