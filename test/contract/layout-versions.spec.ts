import { randomUUID } from 'node:crypto';
import { EventStoreDBClient } from '@eventstore/db-client';
import { MongoClient } from 'mongodb';
import { esdbLayoutRecord, ESDB_LAYOUT_MIGRATIONS } from '../../src/adapters/event-store/esdb/esdb-layout';
import { mongoLayoutRecord, MONGO_LAYOUT_MIGRATIONS } from '../../src/adapters/read-models/mongo/mongo-layout';
import { layoutRecordContract } from './layout-version.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB layout version', (uri) =>
  layoutRecordContract(async () => {
    const client = await new MongoClient(uri).connect();
    const db = client.db(`parley_layout_${randomUUID().slice(0, 8)}`);
    return {
      record: () => mongoLayoutRecord(db),
      cleanup: async () => {
        await db.dropDatabase();
        await client.close();
      },
    };
  }, MONGO_LAYOUT_MIGRATIONS),
);

describeWithEnv('EVENTSTORE_CONNECTION_STRING', 'EventStoreDB layout version', (connectionString) =>
  layoutRecordContract(async () => {
    const client = EventStoreDBClient.connectionString(connectionString);
    const metastream = `$$parley-layout-test-${randomUUID()}`;
    return { record: () => esdbLayoutRecord(client, metastream), cleanup: () => client.dispose() };
  }, ESDB_LAYOUT_MIGRATIONS),
);
