import type { Readable } from 'node:stream';
import { DomainError } from '../domain/errors';

/** What a blob store keeps beside the bytes. */
export interface BlobMetadata {
  readonly contentType: string;
  readonly size: number;
}

/** A key that holds a blob, and when that blob was written (its put finished). */
export interface ListedBlob {
  readonly key: string;
  readonly writtenAt: Date;
}

/** A stored blob, opened for reading. The caller must consume or destroy `stream`. */
export interface StoredBlob extends BlobMetadata {
  readonly stream: Readable;
}

/**
 * Bytes by key (uploaded attachments and files). Keys are `/`-separated segments of
 * `[A-Za-z0-9._-]` that do not start with `.`, e.g. `<instance>/<attachment>/<upload>`.
 *
 * `put` is all or nothing: when it resolves the blob is durable and readable under its key;
 * when it rejects (the source failed, the disk filled, the process died) the key shows what it
 * showed before, never a partial blob. Writing an existing key replaces it.
 */
export interface BlobStore {
  put(key: string, content: Buffer | Readable, options: { contentType: string }): Promise<{ size: number }>;
  /** The blob, or null when the key holds none. */
  get(key: string): Promise<StoredBlob | null>;
  exists(key: string): Promise<boolean>;
  /** Removes the blob; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every key that holds a blob (each once, in no set order), optionally only those under
   * `prefix` (whole segments, e.g. `<instance>`). A key written while the listing runs may
   * or may not show. What is orphaned is the caller's judgement (see the orphan blob sweep).
   */
  list(options?: { prefix?: string }): AsyncIterable<ListedBlob>;
  /**
   * Removes what puts that never finished left behind (a process killed mid-write): temporary
   * files, chunks without a file. Never visible under a key; only what is older than `before`
   * goes, since a younger one may belong to a put still running. Resolves to how many went.
   */
  removeAbandonedWrites(before: Date): Promise<number>;
  close(): Promise<void>;
}

export const BLOB_STORE = Symbol('BlobStore');

/** A put the storage refused (a full disk, a read-only volume): nothing was stored, so a retry is safe. */
export const blobNotSaved = (reason: string, cause: unknown): DomainError =>
  Object.assign(
    new DomainError('unavailable', 'storage_unavailable', `The file was not saved: ${reason}; it is safe to retry`),
    { cause },
  );

const SEGMENT = '[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}';
const KEY = new RegExp(`^${SEGMENT}(/${SEGMENT}){0,15}$`);

/** Throws unless `key` is a valid blob key (shared by every adapter, so keys valid on one are valid on all). */
export function assertBlobKey(key: string): void {
  if (typeof key !== 'string' || key.length > 1024 || !KEY.test(key)) {
    throw new Error(`Invalid blob key: ${JSON.stringify(key)}`);
  }
}

/** Content types are stored verbatim; one line, bounded. */
export function assertContentType(contentType: string): void {
  if (typeof contentType !== 'string' || contentType.length === 0 || contentType.length > 255 || /[\r\n]/.test(contentType)) {
    throw new Error(`Invalid content type: ${JSON.stringify(contentType)}`);
  }
}
