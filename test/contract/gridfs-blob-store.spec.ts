import { GridFsBlobStore } from '../../src/adapters/blobs/gridfs/gridfs-blob-store';
import { blobStoreContract } from './blob-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'GridFS blob-store contract suite', (uri) =>
  blobStoreContract('GridFsBlobStore', async () => {
    const store = await GridFsBlobStore.connect(uri, 'parley_contract');
    return { store, cleanup: () => store.close() };
  }),
);
