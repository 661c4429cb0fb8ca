import { Binary, MongoClient, ObjectId } from 'mongodb';
import { GridFsBlobStore } from '../../src/adapters/blobs/gridfs/gridfs-blob-store';
import { blobStoreContract } from './blob-store.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'GridFS blob-store contract suite', (uri) => {
  blobStoreContract('GridFsBlobStore', async () => {
    const store = await GridFsBlobStore.connect(uri, 'parley_contract');
    return { store, cleanup: () => store.close() };
  });

  describe('GridFsBlobStore: chunks a killed put left without a file', () => {
    it('removes those older than asked, and keeps younger ones (a put may still be writing them)', async () => {
      const client = await new MongoClient(uri).connect();
      const store = await GridFsBlobStore.connect(uri, 'parley_contract');
      const chunks = client.db('parley_contract').collection('blobs.chunks');
      const old = ObjectId.createFromTime(Math.floor((Date.now() - 2 * 3600_000) / 1000));
      const young = new ObjectId();
      try {
        await chunks.insertMany([
          { files_id: old, n: 0, data: new Binary(Buffer.from('first')) },
          { files_id: old, n: 1, data: new Binary(Buffer.from('second')) },
          { files_id: young, n: 0, data: new Binary(Buffer.from('still writing')) },
        ]);
        expect(await store.removeAbandonedWrites(new Date(Date.now() - 3600_000))).toBeGreaterThanOrEqual(1);
        expect(await chunks.countDocuments({ files_id: old })).toBe(0);
        expect(await chunks.countDocuments({ files_id: young })).toBe(1);
      } finally {
        await chunks.deleteMany({ files_id: { $in: [old, young] } });
        await store.close();
        await client.close();
      }
    });
  });
});
