import {
  Db,
  GridFSBucket,
  GridFSFile,
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
  ObjectId,
} from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertBlobKey,
  assertContentType,
  BlobStore,
  blobNotSaved,
  ListedBlob,
  StoredBlob,
} from '../../../shared/ports/blob-store.port';

/** MongoDB's code for a server whose disk is full (OutOfDiskSpace). */
const OUT_OF_DISK_SPACE = 14031;

/**
 * The driver's failures to store, as a client may read them (like the fs store's ENOSPC/EROFS);
 * other errors (the source failed, a bug) stay as they are. A put whose file document was not
 * confirmed is reported unsaved even if the primary applied it: no event ever names its key (the
 * upload fails), so a retry is safe and the orphan blob sweep removes it.
 */
export function gridFsStorageFailure(error: unknown): unknown {
  if (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  ) {
    return blobNotSaved('the blob store (MongoDB) could not be reached', error);
  }
  if (error instanceof MongoOperationTimeoutError) return blobNotSaved('the blob store (MongoDB) timed out', error);
  if (error instanceof MongoWriteConcernError) {
    return blobNotSaved('the blob store (MongoDB) did not confirm the write on a majority', error);
  }
  if (error instanceof MongoServerError) {
    if (error.code === OUT_OF_DISK_SPACE) return blobNotSaved('the disk is full', error);
    return blobNotSaved(`the blob store (MongoDB) could not be written (${error.codeName ?? error.code ?? error.message})`, error);
  }
  return error;
}

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
    private readonly bucketName = 'blobs',
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
      // When the driver cannot, the orphan blob sweep removes the chunks (removeAbandonedWrites).
      await upload.abort().catch(() => undefined);
      throw gridFsStorageFailure(error);
    }
    // The new blob is durable and read first; older versions that stay are removed with the key.
    const older = await this.versions(key, { _id: { $ne: upload.id } }).catch(() => []);
    await Promise.all(older.map((file) => this.remove(file._id).catch(() => undefined)));
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

  /**
   * Walks the files collection in (filename, uploadDate) order — GridFS's own index — so the
   * versions of a key come together: each key once, with its newest version's time.
   */
  async *list(options: { prefix?: string } = {}): AsyncIterable<ListedBlob> {
    if (options.prefix !== undefined) assertBlobKey(options.prefix);
    const filter = options.prefix === undefined ? {} : { filename: { $regex: `^${escapeRegExp(options.prefix)}/` } };
    const files = this.bucket.find(filter, {
      sort: { filename: 1, uploadDate: 1 },
      projection: { filename: 1, uploadDate: 1 },
    });
    let pending: ListedBlob | null = null;
    for await (const file of files) {
      if (pending && pending.key !== file.filename) yield pending;
      pending = { key: file.filename, writtenAt: file.uploadDate };
    }
    if (pending) yield pending;
  }

  /**
   * Chunks without a file document: a put the driver could not abort (the process died). A
   * chunk's `files_id` is the ObjectId the put chose when it began, so its time is the put's
   * start; only the first chunk of each is looked at, through GridFS's `files_id, n` index.
   */
  async removeAbandonedWrites(before: Date): Promise<number> {
    const chunks = this.db.collection(`${this.bucketName}.chunks`);
    const abandoned = await chunks
      .aggregate<{ _id: ObjectId }>([
        { $match: { n: 0, files_id: { $lt: ObjectId.createFromTime(Math.floor(before.getTime() / 1000)) } } },
        { $lookup: { from: `${this.bucketName}.files`, localField: 'files_id', foreignField: '_id', as: 'file' } },
        { $match: { file: { $size: 0 } } },
        { $project: { _id: '$files_id' } },
      ])
      .toArray();
    for (const { _id } of abandoned) await chunks.deleteMany({ files_id: _id });
    return abandoned.length;
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

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
