import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../app/personal-data-rules';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { SecretBox } from '../../shared/crypto/secret-box';
import { openSqliteStores, SqliteStores } from '../../../test/support/sqlite-stores';
import { scanForMarkers } from '../../../test/support/byte-scan';
import { userDecider, userStream } from './domain/user.decider';

const box = SecretBox.fromBase64(Buffer.alloc(32, 5).toString('base64'));
const now = '2026-03-01T00:00:00.000Z';
const meta = { occurred_at: now };
const created = (i: number) => userDecider.decide({ type: 'CreateUser', id: `u${i}`, name: `NAME-${i}`, custom_data: { i }, now }, userDecider.initialState());

describe("users' profile keys", () => {
  let stores: SqliteStores;
  let keys: SqliteDataKeyStore;
  beforeEach(() => {
    stores = openSqliteStores('parley-profile-keys-');
    keys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
  });
  afterEach(async () => {
    await keys.close();
    await stores.close();
  });

  for (const exclusive of [true, false]) {
    it(`are made for a batch of users in one durable write, and their appends make none (${exclusive ? 'the embedded server' : 'processes sharing the store'})`, async () => {
      const log = new SealingEventStore(stores.events, new DataKeyRing(keys, box, { size: 1_000, ttlMs: 60_000, exclusive }), PERSONAL_DATA_RULES);
      const creates = jest.spyOn(keys, 'create');
      const batch = Array.from({ length: 25 }, (_, i) => ({ streamName: userStream('acme', `u${i}`), events: created(i) }));
      await log.prepareKeys(batch);
      expect(creates).toHaveBeenCalledTimes(1);
      expect(creates.mock.calls[0][0]).toHaveLength(25);
      for (const { streamName, events } of batch) await log.append(streamName, events.map((e) => ({ ...e, metadata: meta })), 'no_stream');
      expect(creates).toHaveBeenCalledTimes(1);
      expect(scanForMarkers({ folders: [stores.dir] }, ['NAME-0', 'NAME-24'])).toEqual([]);
      const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
      expect((await fresh.readStream(userStream('acme', 'u24')))[0].data).toEqual({ id: 'u24', name: 'NAME-24', custom_data: { i: 24 }, created_at: now });
    });
  }
});
