import { MongoClient, MongoServerError, MongoWriteConcernError } from 'mongodb';
import { Readable } from 'node:stream';
import { DomainError } from '../../../shared/domain/errors';
import { GridFsBlobStore, gridFsStorageFailure } from './gridfs-blob-store';

/** What the 503 a client reads says; the cause stays attached for the log. */
const notSaved = (reason: string) => ({
  status: 503,
  code: 'unavailable/storage_unavailable',
  description: `The file was not saved: ${reason}; it is safe to retry`,
});

describe('GridFsBlobStore write failures (no server needed)', () => {
  it('answers a put to a MongoDB it cannot reach with the 503 that says the file was not saved', async () => {
    // A real driver against a port nothing listens on: server selection fails.
    const client = new MongoClient('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&directConnection=true');
    const store = new GridFsBlobStore(client, 'parley_unreachable');
    try {
      const refused = await store
        .put('acme/att1/u1', Readable.from([Buffer.alloc(300_000, 1)]), { contentType: 'text/plain' })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject(notSaved('the blob store (MongoDB) could not be reached'));
      const refusedBuffer = await store.put('acme/att1/u2', Buffer.from('x'), { contentType: 'text/plain' }).catch((e: unknown) => e);
      expect(refusedBuffer).toMatchObject(notSaved('the blob store (MongoDB) could not be reached'));
    } finally {
      await store.close();
    }
  });

  it('maps the server refusing the write (a full disk, an unconfirmed write concern, any other server error)', () => {
    const full = new MongoServerError({ ok: 0, code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'No space left on device' });
    expect(gridFsStorageFailure(full)).toMatchObject(notSaved('the disk is full'));
    const unconfirmed = new MongoWriteConcernError({
      ok: 1,
      writeConcernError: { code: 64, codeName: 'WriteConcernTimeout', errmsg: 'waiting for replication timed out' },
    } as ConstructorParameters<typeof MongoWriteConcernError>[0]);
    expect(gridFsStorageFailure(unconfirmed)).toMatchObject(notSaved('the blob store (MongoDB) did not confirm the write on a majority'));
    const unauthorized = new MongoServerError({ ok: 0, code: 13, codeName: 'Unauthorized', errmsg: 'not authorized' });
    expect(gridFsStorageFailure(unauthorized)).toMatchObject(notSaved('the blob store (MongoDB) could not be written (Unauthorized)'));
  });

  it('leaves errors that are not the store failing as they are (the upload source failed, a bug)', () => {
    const sourceFailed = new Error('client went away');
    expect(gridFsStorageFailure(sourceFailed)).toBe(sourceFailed);
  });
});
