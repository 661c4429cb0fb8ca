import { Db, GridFSBucket, GridFSFile, MongoClient, ObjectId } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertBlobKey,
  assertContentType,
  BlobStore,
  StoredBlob,
} from '../../../shared/ports/blob-store.port';

/**
 * Blobs in MongoDB GridFS (bucket `blobs`), used when MONGODB_URI is set. The key is the GridFS
 * filename. GridFS writes the chunks first and the file document last, so a failed or
 * interrupted put is invisible (its orphan chunks are removed by `abort` when the driver still
 * can); a put of an existing key adds a newer file, then removes the older ones, and reads
 * always take the newest. Writes wait for a journaled majority.
 */
export class GridFsBlobStore implements BlobStore {
  private readonly db: Db;
  private readonly bucket: GridFSBucket;

  static async connect(uri: string, dbName = 'parley', bucketName = 'blobs'): Promise<GridFsBlobStore> {
    const shared = await acquireMongoClient(uri);
    return new GridFsBlobStore(shared.client, dbName, bucketName, shared.release);
  }

  constructor(
    private readonly client: MongoClient,
    dbName = 'parley',
    bucketName = 'blobs',
    /** A client handed in is closed with the store unless this says otherwise. */
    private readonly release: () => Promise<void> = () => client.close(),
  ) {
    this.db = client.db(dbName);
    this.bucket = new GridFSBucket(this.db, { bucketName, writeConcern: { w: 'majority', journal: true } });
  }

  async put(key: string, content: Buffer | Readable, options: { contentType: string }): Promise<{ size: number }> {
    assertBlobKey(key);
    assertContentType(options.contentType);
    const upload = this.bucket.openUploadStream(key, { metadata: { contentType: options.contentType } });
    let size = 0;
    const source = Buffer.isBuffer(content) ? Readable.from([content]) : content;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer | string>) {
          for await (const chunk of chunks) {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            size += bytes.length;
            yield bytes;
          }
        },
        upload,
      );
    } catch (error) {
      await upload.abort().catch(() => undefined);
      throw error;
    }
    const older = await this.versions(key, { _id: { $ne: upload.id } });
    await Promise.all(older.map((file) => this.remove(file._id)));
    return { size };
  }

  async get(key: string): Promise<StoredBlob | null> {
    assertBlobKey(key);
    const [file] = await this.versions(key, {}, 1);
    if (!file) return null;
    return {
      stream: this.bucket.openDownloadStream(file._id),
      size: file.length,
      contentType: typeof file.metadata?.contentType === 'string' ? file.metadata.contentType : 'application/octet-stream',
    };
  }

  async exists(key: string): Promise<boolean> {
    assertBlobKey(key);
    return (await this.versions(key, {}, 1)).length > 0;
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await Promise.all((await this.versions(key)).map((file) => this.remove(file._id)));
  }

  async close(): Promise<void> {
    await this.release();
  }

  /** The files stored under a key, newest first. */
  private versions(key: string, filter: Record<string, unknown> = {}, limit = 0): Promise<GridFSFile[]> {
    return this.bucket
      .find({ filename: key, ...filter }, { sort: { uploadDate: -1, _id: -1 }, ...(limit > 0 && { limit }) })
      .toArray();
  }

  /** Deletes one stored file; one removed meanwhile by another writer is fine. */
  private async remove(id: ObjectId): Promise<void> {
    try {
      await this.bucket.delete(id);
    } catch (error) {
      if (!/not found/i.test((error as Error)?.message ?? '')) throw error;
    }
  }
}
