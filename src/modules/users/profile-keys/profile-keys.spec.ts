import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { SealingEventStore } from '../../../shared/application/operations/sealing-event-store';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { DataKeyRing } from '../../../shared/crypto/data-key-ring';
import { SecretBox } from '../../../shared/crypto/secret-box';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { scanForMarkers } from '../../../../test/support/byte-scan';
import { userDecider, userStream } from '../domain/user.decider';
import { PROFILE_KEY_BLOCK, ProfileKeys } from './profile-keys';

const box = SecretBox.fromBase64(Buffer.alloc(32, 5).toString('base64'));
const answered: ReadYourWrites = { waitFor: async () => undefined };
const meta = { occurred_at: '2026-03-01T00:00:00.000Z' };

describe("new users' profile keys", () => {
  let stores: SqliteStores;
  let keys: SqliteDataKeyStore;
  let pipeline: CommandPipeline;
  let creates: jest.SpyInstance;
  beforeEach(() => {
    stores = openSqliteStores('parley-profile-keys-');
    keys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    creates = jest.spyOn(keys, 'create');
    const log = new SealingEventStore(stores.events, new DataKeyRing(keys, box, { size: 10_000, ttlMs: 60_000, exclusive: true }), PERSONAL_DATA_RULES);
    pipeline = new CommandPipeline(log, answered);
  });
  afterEach(async () => {
    await keys.close();
    await stores.close();
  });

  it('are made a block at a time, each durable before it is handed out, and none handed out twice', async () => {
    const profileKeys = new ProfileKeys(pipeline);
    const [first] = await profileKeys.take('acme');
    expect(creates).toHaveBeenCalledTimes(1);
    expect(creates.mock.calls[0][0]).toHaveLength(PROFILE_KEY_BLOCK);
    expect((await keys.getMany([first])).has(first)).toBe(true);

    const taken = [first];
    // Batches of users, as batch_users takes them: a new block is made before the current one runs out.
    for (let i = 0; i < 10; i++) taken.push(...(await profileKeys.take('acme', 25)));
    expect(new Set(taken).size).toBe(251);
    expect(creates.mock.calls.length).toBeLessThanOrEqual(Math.ceil(251 / PROFILE_KEY_BLOCK) + 1);
    expect((await keys.getMany(taken)).size).toBe(251);
    expect(taken.every((id) => id.startsWith('acme/profile/'))).toBe(true);
    // Another instance's users take keys of their own.
    expect((await profileKeys.take('other'))[0].startsWith('other/profile/')).toBe(true);
  });

  it('let a user be created, and its profile sealed, without a key of its own written', async () => {
    const profileKeys = new ProfileKeys(pipeline);
    const ids = await profileKeys.take('acme', 25);
    // One block, three quarters of it left: no other is made meanwhile.
    expect(creates).toHaveBeenCalledTimes(1);
    const before = creates.mock.calls.length;
    const now = meta.occurred_at;
    await Promise.all(
      ids.map((profile_key, i) => pipeline.run(userStream('acme', `u${i}`), userDecider, { type: 'CreateUser', id: `u${i}`, name: `NAME-${i}-9f3c`, profile_key, now }, meta)),
    );
    expect(creates.mock.calls.length).toBe(before);
    expect(scanForMarkers({ folders: [stores.dir] }, ['NAME-0-9f3c', 'NAME-24-9f3c'])).toEqual([]);
    const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
    expect((await fresh.readStream(userStream('acme', 'u24')))[0].data).toEqual({ id: 'u24', name: 'NAME-24-9f3c', created_at: now, profile_key: ids[24] });
  });

  it('answer a key store that fails with "not saved, safe to retry", and make the block at the next take', async () => {
    const profileKeys = new ProfileKeys(pipeline);
    creates.mockRejectedValueOnce(new Error('disk gone'));
    await expect(profileKeys.take('acme')).rejects.toMatchObject({ code: 'unavailable/storage_unavailable' });
    await expect(profileKeys.take('acme')).resolves.toHaveLength(1);
  });
});
