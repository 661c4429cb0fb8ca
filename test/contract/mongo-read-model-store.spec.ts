import { MongoReadModelStore } from '../../src/adapters/read-models/mongo/mongo-read-model-store';
import { readModelStoreContract } from './read-model-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB read-model contract suite', (uri) =>
  readModelStoreContract('MongoReadModelStore', async () => {
    const store = await MongoReadModelStore.connect(uri, 'parley_contract');
    return { store, cleanup: () => store.close() };
  }),
);
