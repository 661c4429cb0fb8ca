import { EventStoreDBClient } from '@eventstore/db-client';
import { FakeEventStoreDb, startFakeEventStoreDb } from '../../../../test/support/fake-eventstoredb';
import { layoutRecordContract } from '../../../../test/contract/layout-version.contract';
import { migrateLayout } from '../../shared/layout-versions';
import { esdbLayoutRecord, ESDB_LAYOUT_MIGRATIONS, LAYOUT_METASTREAM } from './esdb-layout';

/**
 * EventStoreDB's layout version through the real client, against a local endpoint speaking the
 * server's protocol for one stream's reads and appends (test/support/fake-eventstoredb.ts); the
 * same contract runs on a real server in test/contract/layout-versions.spec.ts.
 */
describe('EventStoreDB layout version, through the real client', () => {
  let fake: FakeEventStoreDb;
  let client: EventStoreDBClient;

  describe('the layout record contract', () => {
    layoutRecordContract(async () => {
      fake = await startFakeEventStoreDb();
      client = EventStoreDBClient.connectionString(fake.connectionString);
      return {
        record: () => esdbLayoutRecord(client),
        cleanup: async () => {
          await client.dispose();
          await fake.close();
        },
      };
    }, ESDB_LAYOUT_MIGRATIONS);
  });

  it('keeps the version in the metastream of parley-layout, which readers of the log never see', async () => {
    fake = await startFakeEventStoreDb();
    client = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      await migrateLayout(esdbLayoutRecord(client), ESDB_LAYOUT_MIGRATIONS);
      expect(fake.appends.map((a) => a.streamName)).toEqual([LAYOUT_METASTREAM]);
      expect(LAYOUT_METASTREAM.startsWith('$')).toBe(true);
    } finally {
      await client.dispose();
      await fake.close();
    }
  });
});
