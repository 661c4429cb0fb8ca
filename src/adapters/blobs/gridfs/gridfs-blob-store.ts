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

/** Keys `list()` reads per query: each page is one query that leaves no cursor open behind it. */
const LIST_PAGE = 1000;
/**
 * How far a pass of `removeAbandonedWrites` looks back past the previous pass's cutoff (chunk
 * times come from the writing process's clock, which may lag this one's).
 */
const SWEEP_OVERLAP_MS = 3600_000;

/**
 * Blobs in MongoDB GridFS (bucket `blobs`), used when MONGODB_URI is set. The key is the GridFS
 * filename. GridFS writes the chunks first and the file document last, so a failed or
 * interrupted put is invisible (its orphan chunks are removed by `abort` when the driver still
 * can); a put of an existing key adds a newer file, then removes the versions older than its
 * own (never a newer one a concurrent put wrote), and reads always take the newest. Writes wait
 * for a journaled majority.
 */
export class GridFsBlobStore implements BlobStore {
  private readonly db: Db;
  private readonly bucket: GridFSBucket;
  /** The cutoff of this store's last finished `removeAbandonedWrites`: later passes look only past it. */
  private sweptBefore: Date | null = null;

  /**
   * Creates GridFS's two indexes here: the driver creates them only on a bucket's first upload,
   * ignores a failure there and never tries again, and assumes them whenever `files` holds a
   * document, while reads, listing and the sweep of abandoned writes rely on them.
   */
  static async connect(uri: string, dbName = 'parley', bucketName = 'blobs'): Promise<GridFsBlobStore> {
    const shared = await acquireMongoClient(uri);
    try {
      const db = shared.client.db(dbName);
      await db.collection(`${bucketName}.files`).createIndex({ filename: 1, uploadDate: 1 });
      await db.collection(`${bucketName}.chunks`).createIndex({ files_id: 1, n: 1 }, { unique: true });
    } catch (error) {
      await shared.release().catch(() => undefined);
      throw error;
    }
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
    // The new blob is durable and read first while it is the newest. Versions older than it go;
    // one a concurrent put finished later stays, and goes when that put cleans up. Versions
    // left by a failed clean-up are removed with the key.
    const mine = upload.gridFSFile!;
    const older = await this.versions(key, {
      $or: [{ uploadDate: { $lt: mine.uploadDate } }, { uploadDate: mine.uploadDate, _id: { $lt: upload.id } }],
    }).catch(() => []);
    await Promise.all(older.map((file) => this.remove(file._id).catch(() => undefined)));
    return { size };
  }

  async get(key: string): Promise<StoredBlob | null> {
    assertBlobKey(key);
    const [file] = await this.versions(key, {}, 1);
    if (!file) return null;
    const stream = this.bucket.openDownloadStream(file._id);
    // A reader that gives up part way (destroy) leaves the server's chunks cursor open for 10
    // minutes; abort() closes it.
    stream.once('close', () => {
      if (!stream.readableEnded) stream.abort().catch(() => undefined);
    });
    return {
      stream,
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
   * versions of a key come together: each key once, with its newest version's time. It reads a
   * page of keys per query, so no server cursor waits (and times out) while the caller works
   * through a page.
   */
  async *list(options: { prefix?: string } = {}): AsyncIterable<ListedBlob> {
    if (options.prefix !== undefined) assertBlobKey(options.prefix);
    const inPrefix = options.prefix === undefined ? {} : { $regex: `^${escapeRegExp(options.prefix)}/` };
    let after: string | undefined;
    for (;;) {
      const filename = { ...inPrefix, ...(after !== undefined && { $gt: after }) };
      const files = await this.bucket
        .find(
          Object.keys(filename).length ? { filename } : {},
          { sort: { filename: 1, uploadDate: 1 }, projection: { filename: 1, uploadDate: 1 }, limit: LIST_PAGE, batchSize: LIST_PAGE },
        )
        .toArray();
      const full = files.length === LIST_PAGE;
      let pending: ListedBlob | null = null;
      for (const file of files) {
        if (pending && pending.key !== file.filename) yield pending;
        pending = { key: file.filename, writtenAt: file.uploadDate };
      }
      if (!pending) return;
      if (!full) {
        yield pending;
        return;
      }
      // The page may end inside the last key's versions: its newest one says when it was written.
      const [newest] = await this.versions(pending.key, {}, 1);
      if (newest) yield { key: pending.key, writtenAt: newest.uploadDate };
      after = pending.key;
    }
  }

  /**
   * Chunks without a file document: a put the driver could not abort (the process died). A
   * chunk's `files_id` is the ObjectId the put chose when it began, so its time is the put's
   * start; only the first chunk of each is looked at, through GridFS's `files_id, n` index (the
   * projection keeps that scan on the index), and only those begun since the previous pass's
   * cutoff (less an overlap), so a pass costs what was written since, not the whole store.
   */
  async removeAbandonedWrites(before: Date): Promise<number> {
    const chunks = this.db.collection(`${this.bucketName}.chunks`);
    const idAt = (at: Date) => ObjectId.createFromTime(Math.floor(at.getTime() / 1000));
    const since = this.sweptBefore && new Date(this.sweptBefore.getTime() - SWEEP_OVERLAP_MS);
    const abandoned = await chunks
      .aggregate<{ _id: ObjectId }>([
        { $match: { n: 0, files_id: { $lt: idAt(before), ...(since && { $gte: idAt(since) }) } } },
        { $project: { _id: 0, files_id: 1 } },
        { $lookup: { from: `${this.bucketName}.files`, localField: 'files_id', foreignField: '_id', as: 'file' } },
        { $match: { file: { $size: 0 } } },
        { $project: { _id: '$files_id' } },
      ])
      .toArray();
    for (const { _id } of abandoned) await chunks.deleteMany({ files_id: _id });
    if (!this.sweptBefore || before > this.sweptBefore) this.sweptBefore = before;
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
