import { EsdbEventStore } from '../../src/adapters/event-store/esdb/esdb-event-store';
import { eventStoreContract } from './event-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('EVENTSTORE_CONNECTION_STRING', 'EventStoreDB contract suite', (connectionString) =>
  eventStoreContract('EsdbEventStore', async () => {
    const store = await EsdbEventStore.connect(connectionString);
    return { store, cleanup: () => store.close() };
  }),
);
