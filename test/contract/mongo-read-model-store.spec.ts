import { MongoReadModelStore } from '../../src/adapters/read-models/mongo/mongo-read-model-store';
import { readModelStoreContract } from './read-model-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB read-model contract suite', (uri) =>
  readModelStoreContract('MongoReadModelStore', async (options) => {
    const store = await MongoReadModelStore.connect(uri, 'parley_contract', options);
    return { store, cleanup: () => store.close() };
  }),
);
