import { randomUUID } from 'node:crypto';
import { open, opendir, readdir, rename, rm, rmdir, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import {
  assertBlobKey,
  assertContentType,
  BlobStore,
  blobNotSaved,
  ListedBlob,
  StoredBlob,
} from '../../../shared/ports/blob-store.port';
import { makePrivateDirAsync, openPrivateFile } from '../../../shared/files/private-files';

/**
 * Each blob is one file: a header line `PARLEYBLOB1 <json metadata>\n`, then the bytes. One
 * file (not a data file and a sidecar) keeps bytes and metadata in a single atomic rename.
 */
const MAGIC = 'PARLEYBLOB1 ';
const MAX_HEADER = 1024;
/** Temporary files live here; no key can name it (segments never start with `.`). */
const TEMP_DIR = '.tmp';
/** Left-over temporary files older than this are removed when the store opens (the orphan blob sweep removes them sooner). */
const STALE_TEMP_MS = 24 * 3600 * 1000;

const isNotFound = (error: unknown): boolean => (error as NodeJS.ErrnoException)?.code === 'ENOENT';

/** The file system's storage failures, as a client may read them; other errors (a bug, a bad source) stay as they are. */
function storageFailure(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return blobNotSaved('the disk is full', error);
  if (code === 'EROFS') return blobNotSaved('the blob store is read-only', error);
  if (code === 'EIO' || code === 'EACCES' || code === 'EPERM') return blobNotSaved(`the blob store could not be written (${code})`, error);
  return error;
}

/**
 * Blobs as files under `<DATA_DIR>/blobs/<key>`. A put writes a temporary file, fsyncs it,
 * renames it over the final name and fsyncs the directory before it resolves, so a crash
 * leaves either the old blob or the new one, never half of one under the final name.
 */
export class FsBlobStore implements BlobStore {
  private readonly root: string;

  private constructor(root: string) {
    this.root = resolve(root);
  }

  static async open(root: string): Promise<FsBlobStore> {
    await makePrivateDirAsync(join(root, TEMP_DIR));
    const store = new FsBlobStore(root);
    await store.removeAbandonedWrites(new Date(Date.now() - STALE_TEMP_MS));
    return store;
  }

  private path(key: string): string {
    assertBlobKey(key);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, content: Buffer | Readable, options: { contentType: string }): Promise<{ size: number }> {
    const final = this.path(key);
    assertContentType(options.contentType);
    const temp = join(this.root, TEMP_DIR, `${randomUUID()}.part`);
    let file: FileHandle | undefined;
    try {
      file = await openPrivateFile(temp, 'wx');
      const header = Buffer.from(`${MAGIC}${JSON.stringify({ contentType: options.contentType })}\n`, 'utf8');
      await file.write(header);
      let size = 0;
      if (Buffer.isBuffer(content)) {
        if (content.length > 0) await file.write(content);
        size = content.length;
      } else {
        for await (const chunk of content) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
          await file.write(bytes);
          size += bytes.length;
        }
      }
      await file.sync();
      await file.close();
      file = undefined;
      await moveInto(temp, final);
      return { size };
    } catch (error) {
      await file?.close().catch(() => undefined);
      // On a volume gone read-only the temporary stays; the sweep at the next open removes it.
      await rm(temp, { force: true }).catch(() => undefined);
      if (!Buffer.isBuffer(content)) content.destroy();
      throw storageFailure(error);
    }
  }

  async get(key: string): Promise<StoredBlob | null> {
    let file: FileHandle;
    try {
      file = await open(this.path(key), 'r');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    try {
      const head = Buffer.alloc(MAX_HEADER);
      const { bytesRead } = await file.read(head, 0, MAX_HEADER, 0);
      const end = head.subarray(0, bytesRead).indexOf(0x0a);
      const line = end < 0 ? '' : head.subarray(0, end).toString('utf8');
      if (!line.startsWith(MAGIC)) throw new Error(`Blob ${key} has no header`);
      const meta = JSON.parse(line.slice(MAGIC.length)) as { contentType: string };
      const { size } = await file.stat();
      const start = end + 1;
      // The stream owns the handle from here: it closes it at the end, on error or when destroyed.
      const stream = file.createReadStream({ start, autoClose: true });
      return { stream, size: size - start, contentType: meta.contentType };
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.path(key))).isFile();
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.path(key);
    await rm(path, { force: true });
    // Drop directories the key leaves empty (another put may refill one: then rmdir just fails).
    for (let dir = dirname(path); dir.length > this.root.length && dir.startsWith(this.root); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
    }
  }

  async close(): Promise<void> {}

  /** A walk of the key directories; a blob's time is its file's mtime (its last byte written, before the rename). */
  async *list(options: { prefix?: string } = {}): AsyncIterable<ListedBlob> {
    const start = options.prefix === undefined ? this.root : this.path(options.prefix);
    const pending = [start];
    while (pending.length > 0) {
      const dir = pending.pop()!;
      let entries;
      try {
        entries = await opendir(dir);
      } catch (error) {
        // A prefix that holds nothing, or a directory a delete dropped meanwhile.
        if (isNotFound(error) || (error as NodeJS.ErrnoException)?.code === 'ENOTDIR') continue;
        throw error;
      }
      for await (const entry of entries) {
        if (entry.name.startsWith('.')) continue; // `.tmp`; no key segment starts with a dot
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          pending.push(path);
        } else if (entry.isFile()) {
          try {
            const { mtimeMs } = await stat(path);
            yield { key: path.slice(this.root.length + 1).split(sep).join('/'), writtenAt: new Date(mtimeMs) };
          } catch (error) {
            if (!isNotFound(error)) throw error; // deleted meanwhile
          }
        }
      }
    }
  }

  /** Temporaries a crash left behind (never under a final name); younger ones may belong to a live writer. */
  async removeAbandonedWrites(before: Date): Promise<number> {
    const dir = join(this.root, TEMP_DIR);
    let removed = 0;
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      try {
        if ((await stat(path)).mtimeMs < before.getTime()) {
          await rm(path, { force: true });
          removed++;
        }
      } catch {
        // removed meanwhile
      }
    }
    return removed;
  }
}

/**
 * Renames the finished temporary over the final name. A concurrent delete may remove the
 * (empty) parent directory between mkdir and rename: then make it again.
 */
async function moveInto(temp: string, final: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await makePrivateDirAsync(dirname(final));
    try {
      await rename(temp, final);
      break;
    } catch (error) {
      if (!isNotFound(error) || attempt >= 5) throw error;
    }
  }
  await fsyncDirectory(dirname(final));
}

/** Makes a rename durable: the directory entry is flushed as well as the file. */
async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
