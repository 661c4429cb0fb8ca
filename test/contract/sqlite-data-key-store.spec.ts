import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../src/adapters/data-keys/sqlite/sqlite-data-key-store';
import { dataKeyStoreContract } from './data-key-store.contract';

dataKeyStoreContract('SqliteDataKeyStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-keys-contract-'));
  const file = join(dir, 'keys.sqlite');
  const open: SqliteDataKeyStore[] = [new SqliteDataKeyStore(file)];
  return {
    store: open[0],
    reopen: async () => (await open[0].close(), open.push(new SqliteDataKeyStore(file)), open[open.length - 1]),
    cleanup: async () => {
      for (const store of open) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
