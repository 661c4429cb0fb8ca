import { createReadStream, createWriteStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Readable, Transform, TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makePrivateDir, openPrivateFileSync } from '../../../files/private-files';
import { assertBlobKey } from '../../../ports/blob-store.port';
import { BLOBS_DIR, BLOBS_FILE, blobFile, EVENTS_FILE, MANIFEST_FILE } from './transfer-format';
import { ImportSourceError } from './import-instance';

/**
 * An instance export as one file: a tar archive (POSIX ustar, pax for long names) of the export
 * directory `npm run export` writes, so `tar -xf` gives a directory `npm run import` takes.
 * `manifest.json` comes last: an archive cut short anywhere before its end has no manifest, and
 * the import refuses it as no export at all.
 */

/** tar-stream 2 ships no types: the part of it used here. */
interface TarHeader {
  readonly name: string;
  readonly size?: number;
  readonly mode?: number;
  readonly mtime?: Date;
  readonly type?: string;
}
interface TarPack extends Readable {
  entry(header: TarHeader, callback: (error?: Error | null) => void): Writable;
  finalize(): void;
}
interface TarExtract extends Writable {
  on(event: 'entry', listener: (header: TarHeader, stream: Readable, next: (error?: Error) => void) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}
/** tar-stream, loaded at the first export or import: a server that never moves an instance does not hold its 17 modules. */
const tar = (): { pack(): TarPack; extract(): TarExtract } =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('tar-stream') as { pack(): TarPack; extract(): TarExtract };

/** The archive is larger than the cap it was taken in under: the spool is deleted, nothing was written. */
export class ArchiveTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The archive is larger than ${maxBytes} bytes`);
  }
}

/** The files of an export directory, as archive names (`/`-separated): the blobs, then the events, then the manifest. */
function exportEntries(dir: string): string[] {
  const blobsDir = join(dir, BLOBS_DIR);
  const blobs = existsSync(blobsDir)
    ? readdirSync(blobsDir, { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile())
        .map((entry) => [BLOBS_DIR, ...relative(blobsDir, join(entry.parentPath, entry.name)).split(sep)].join('/'))
        .sort()
    : [];
  return [...blobs, BLOBS_FILE, EVENTS_FILE, MANIFEST_FILE].filter((name) => existsSync(join(dir, ...name.split('/'))));
}

/** A tar stream of the export directory `dir` (written by `InstanceExporter`), read file by file as it is consumed. */
export function packExport(dir: string): Readable {
  const pack = tar().pack();
  const addFile = (name: string) =>
    new Promise<void>((resolve, reject) => {
      const path = join(dir, ...name.split('/'));
      const { size, mtime } = statSync(path);
      const entry = pack.entry({ name, size, mtime, mode: 0o600, type: 'file' }, (error) => (error ? reject(error) : resolve()));
      createReadStream(path)
        .on('error', (error) => {
          entry.destroy(error);
          reject(error);
        })
        .pipe(entry);
    });
  void (async () => {
    try {
      for (const name of exportEntries(dir)) await addFile(name);
      pack.finalize();
    } catch (error) {
      pack.destroy(error as Error);
    }
  })();
  return pack;
}

/** Which file of an export directory an archive entry is, or why it is none. */
function entryPath(dir: string, header: TarHeader): string | null {
  const name = header.name.replace(/^\.\//, '');
  if (header.type === 'directory' && (name === `${BLOBS_DIR}/` || name.startsWith(`${BLOBS_DIR}/`) || name === '' || name === './')) return null;
  if (header.type !== 'file' && header.type !== undefined) {
    throw new ImportSourceError(`the archive entry "${header.name}" is a ${header.type}: an export holds plain files only`);
  }
  if (name === MANIFEST_FILE || name === EVENTS_FILE || name === BLOBS_FILE) return join(dir, name);
  if (name.startsWith(`${BLOBS_DIR}/`)) {
    const key = name.slice(BLOBS_DIR.length + 1);
    try {
      assertBlobKey(key);
    } catch (error) {
      throw new ImportSourceError(`the archive entry "${header.name}" is no blob of an export: ${(error as Error).message}`);
    }
    return blobFile(dir, key);
  }
  throw new ImportSourceError(`the archive entry "${header.name}" is not part of an instance export`);
}

/** Counts the bytes going by, failing as soon as there are more than `max`. */
class CappedBytes extends Transform {
  bytes = 0;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) return done(new ArchiveTooLargeError(this.max));
    done(null, chunk);
  }
}

/**
 * Unpacks an export archive from `source` into `dir` (made private; it must not exist yet, or be
 * empty), taking only the files an export has (a blob key checked as the blob store checks it, so
 * no entry lands outside `dir`) and each once. Over `maxBytes` of archive: `ArchiveTooLargeError`;
 * anything but a tar of an export: `ImportSourceError`. The caller deletes `dir` on failure.
 */
export async function unpackExport(source: Readable, dir: string, maxBytes: number): Promise<{ bytes: number }> {
  makePrivateDir(dir);
  const seen = new Set<string>();
  const extract = tar().extract();
  const counter = new CappedBytes(maxBytes);
  extract.on('entry', (header, stream, next) => {
    let path: string | null;
    try {
      path = entryPath(dir, header);
      if (path !== null && seen.has(path)) throw new ImportSourceError(`the archive holds "${header.name}" twice`);
    } catch (error) {
      stream.resume();
      return next(error as Error);
    }
    if (path === null) {
      stream.on('end', () => next()).resume();
      return;
    }
    seen.add(path);
    let fd: number;
    try {
      makePrivateDir(join(path, '..'));
      fd = openPrivateFileSync(path, 'wx');
    } catch (error) {
      stream.resume();
      return next(error as Error);
    }
    pipeline(stream, createWriteStream(path, { fd })).then(
      () => next(),
      (error: Error) => next(error),
    );
  });
  try {
    await pipeline(source, counter, extract);
  } catch (error) {
    if (error instanceof ArchiveTooLargeError || error instanceof ImportSourceError) throw error;
    if (counter.bytes > maxBytes) throw new ArchiveTooLargeError(maxBytes);
    const message = (error as Error).message;
    // What tar-stream says of something that is not a tar (or is cut short inside an entry).
    if (/header|tar|end of data|checksum|invalid/i.test(message)) throw new ImportSourceError(`not a Parley export archive (tar): ${message}`);
    throw error;
  }
  return { bytes: counter.bytes };
}
