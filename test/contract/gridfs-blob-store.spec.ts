import { Binary, Db, MongoClient, ObjectId } from 'mongodb';
import { randomBytes, randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { GridFsBlobStore } from '../../src/adapters/blobs/gridfs/gridfs-blob-store';
import { blobStoreContract } from './blob-store.contract';
import { describeWithEnv } from './skip-unless-env';
import { eventually } from '../support/waiting';

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

  /** Each case in a database of its own, dropped afterwards, so server-wide views (cursors, the profiler) are ours alone. */
  describe('GridFsBlobStore on a real server', () => {
    let client: MongoClient;
    let dbName: string;
    let db: Db;
    let store: GridFsBlobStore;
    const at = (msAgo: number, i = 0) => ObjectId.createFromTime(Math.floor((Date.now() - msAgo) / 1000) + i);
    const read = async (key: string): Promise<Buffer | null> => {
      const blob = await store.get(key);
      if (!blob) return null;
      const parts: Buffer[] = [];
      for await (const part of blob.stream) parts.push(part as Buffer);
      return Buffer.concat(parts);
    };
    /** Server cursors left open on `collection` of this database, idle between batches. */
    const idleCursors = async (collection: string): Promise<Record<string, any>[]> =>
      client
        .db('admin')
        .aggregate([{ $currentOp: { idleCursors: true, allUsers: true } }, { $match: { type: 'idleCursor', ns: `${dbName}.${collection}` } }])
        .toArray();

    beforeEach(async () => {
      client = await new MongoClient(uri).connect();
      dbName = `parley_contract_gridfs_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
      db = client.db(dbName);
      store = await GridFsBlobStore.connect(uri, dbName);
    });
    afterEach(async () => {
      await store.close();
      await db.dropDatabase();
      await client.close();
    });

    it('creates the GridFS indexes when it connects, before any upload', async () => {
      const keys = async (collection: string) => (await db.collection(collection).listIndexes().toArray()).map((i) => ({ key: i.key, unique: i.unique ?? false }));
      expect(await keys('blobs.files')).toEqual(expect.arrayContaining([{ key: { filename: 1, uploadDate: 1 }, unique: false }]));
      expect(await keys('blobs.chunks')).toEqual(expect.arrayContaining([{ key: { files_id: 1, n: 1 }, unique: true }]));
    });

    it('a put never removes a newer version of its key that another put finished meanwhile', async () => {
      const key = 'acme/att/replaced';
      const source = new PassThrough();
      const putting = store.put(key, source, { contentType: 'text/plain' });
      source.write(Buffer.from('the older put'));
      // Meanwhile another put of the same key finishes, with a later time (another process whose clock is ahead).
      const newer = new ObjectId();
      await db.collection('blobs.chunks').insertOne({ files_id: newer, n: 0, data: new Binary(Buffer.from('the newer put')) });
      await db.collection('blobs.files').insertOne({
        _id: newer,
        length: 13,
        chunkSize: 255 * 1024,
        uploadDate: new Date(Date.now() + 60_000),
        filename: key,
        metadata: { contentType: 'text/plain' },
      });
      source.end();
      await putting;
      expect((await read(key))?.toString()).toBe('the newer put');
      // Both versions are kept: the older goes when the newer put cleans up after itself.
      expect(await db.collection('blobs.files').countDocuments({ filename: key })).toBe(2);
    });

    it('concurrent puts of one key always leave one of them whole', async () => {
      for (let round = 0; round < 10; round++) {
        const key = `acme/att/race-${round}`;
        const bodies = Array.from({ length: 4 }, (_, i) => Buffer.from(`round ${round} put ${i} `.repeat(1000 * (i + 1))));
        await Promise.all(bodies.map((body) => store.put(key, Readable.from([body]), { contentType: 'text/plain' })));
        const stored = await read(key);
        expect(stored).not.toBeNull();
        expect(bodies.some((body) => body.equals(stored!))).toBe(true);
      }
    });

    it('a reader that gives up part way leaves no cursor open on the server', async () => {
      const key = 'acme/att/large';
      // More chunks than one batch of 16 MiB holds, so the chunks cursor stays open after the first.
      await store.put(key, Readable.from([randomBytes(20 * 1024 * 1024)]), { contentType: 'application/octet-stream' });
      const { _id } = (await db.collection('blobs.files').findOne({ filename: key }))!;
      const mine = async () => (await idleCursors('blobs.chunks')).filter((c) => JSON.stringify(c.cursor?.originatingCommand ?? {}).includes(_id.toHexString()));
      const blob = (await store.get(key))!;
      // Paused mode: the stream buffers what the first batch brought and asks for no more.
      await new Promise<void>((resolve, reject) => {
        blob.stream.once('readable', () => resolve());
        blob.stream.once('error', reject);
      });
      await eventually(async () => (await mine()).length === 1, { what: 'the download leaving its cursor idle', everyMs: 50 });
      blob.stream.destroy();
      await eventually(async () => (await mine()).length === 0, { what: 'the chunks cursor closed after the reader gave up', everyMs: 50 });
    }, 60_000);

    it('lists more keys than a page without holding a cursor open while the caller works', async () => {
      const files = db.collection('blobs.files');
      // 1,200 keys (more than a page), the 1,000th with versions either side of the page's end.
      const docs = Array.from({ length: 1200 }, (_, i) => ({
        _id: new ObjectId(),
        length: 0,
        chunkSize: 255 * 1024,
        uploadDate: new Date(1_700_000_000_000 + i),
        filename: `acme/k${String(i).padStart(5, '0')}/v`,
      }));
      const split = docs[999].filename;
      docs.push({ ...docs[999], _id: new ObjectId(), uploadDate: new Date(1_800_000_000_000) });
      await files.insertMany(docs);
      const listed: { key: string; writtenAt: Date }[] = [];
      for await (const blob of store.list({ prefix: 'acme' })) {
        if (listed.length === 0) expect(await idleCursors('blobs.files')).toEqual([]);
        listed.push(blob);
      }
      expect(listed.map((b) => b.key)).toEqual(docs.slice(0, 1200).map((d) => d.filename));
      expect(listed.find((b) => b.key === split)?.writtenAt).toEqual(new Date(1_800_000_000_000));
      expect(await idleCursors('blobs.files')).toEqual([]);
    });

    it("a pass over abandoned writes looks only at chunks begun since the previous pass's cutoff", async () => {
      const files = db.collection('blobs.files');
      const chunks = db.collection('blobs.chunks');
      // 300 stored blobs begun 3 h ago: judged by the first pass, skipped by the next.
      const ids = Array.from({ length: 300 }, (_, i) => at(3 * 3600_000, i));
      await files.insertMany(ids.map((id, i) => ({ _id: id, length: 1, chunkSize: 255 * 1024, uploadDate: new Date(), filename: `acme/old${i}/v` })));
      await chunks.insertMany(ids.map((id) => ({ files_id: id, n: 0, data: new Binary(Buffer.from('x')) })));
      await db.command({ profile: 2 });
      try {
        const cutoff = Date.now() - 3600_000;
        expect(await store.removeAbandonedWrites(new Date(cutoff))).toBe(0);
        const abandoned = at(3600_000 + 60_000);
        await chunks.insertOne({ files_id: abandoned, n: 0, data: new Binary(Buffer.from('killed')) });
        expect(await store.removeAbandonedWrites(new Date(cutoff + 1_000))).toBe(1);
        expect(await chunks.countDocuments({ files_id: abandoned })).toBe(0);
        expect(await chunks.countDocuments({})).toBe(300);
        const passes = await db
          .collection('system.profile')
          .find({ ns: `${dbName}.blobs.chunks`, 'command.aggregate': 'blobs.chunks' })
          .sort({ ts: 1 })
          .toArray();
        expect(passes).toHaveLength(2);
        expect(passes[0].keysExamined).toBeGreaterThanOrEqual(300);
        expect(passes[1].keysExamined).toBeLessThan(10);
      } finally {
        await db.command({ profile: 0 });
      }
    });
  });
});
