import { randomUUID } from 'node:crypto';
import { GridFsBlobStore } from '../../src/adapters/blobs/gridfs/gridfs-blob-store';
import { MongoRateCounters } from '../../src/adapters/rate-counters/mongo/mongo-rate-counters';
import { MongoReadModelStore } from '../../src/adapters/read-models/mongo/mongo-read-model-store';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB adapters share one client per process', (uri) => {
  it('a closed adapter leaves the others of the same deployment working', async () => {
    const readModels = await MongoReadModelStore.connect(uri, 'parley_contract');
    const blobs = await GridFsBlobStore.connect(uri, 'parley_contract');
    const counters = await MongoRateCounters.connect(uri, 'parley_contract');
    await readModels.close();
    await blobs.close();
    const key = `shared-client-${randomUUID()}`;
    // One time for both hits (in the future, beyond the TTL monitor): the same window whatever the clock does.
    const nowMs = 1_800_000_000_000;
    expect((await counters.hit(key, 60_000, nowMs)).count).toBe(1);
    await counters.close();
    // All closed: a new adapter connects afresh.
    const again = await MongoRateCounters.connect(uri, 'parley_contract');
    expect((await again.hit(key, 60_000, nowMs)).count).toBe(2);
    await again.close();
  });
});
