import { MongoDataKeyStore } from '../../src/adapters/data-keys/mongo/mongo-data-key-store';
import { dataKeyStoreContract } from './data-key-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB data-key store contract suite', (uri) =>
  dataKeyStoreContract('MongoDataKeyStore', async () => {
    const store = await MongoDataKeyStore.connect(uri, 'parley_contract');
    const open = [store];
    return {
      store,
      reopen: async () => (open.push(await MongoDataKeyStore.connect(uri, 'parley_contract')), open[open.length - 1]),
      cleanup: async () => {
        for (const s of open) await s.close();
      },
    };
  }),
);
