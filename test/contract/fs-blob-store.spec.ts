import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBlobStore } from '../../src/adapters/blobs/fs/fs-blob-store';
import { blobStoreContract } from './blob-store.contract';

blobStoreContract('FsBlobStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-blob-contract-'));
  const store = await FsBlobStore.open(join(dir, 'blobs'));
  return { store, cleanup: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
});
