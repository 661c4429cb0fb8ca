import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { chmod, mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';

/**
 * The modes of everything Parley writes to disk: the event log, read models, blobs, the master
 * key, exports and their directories hold users' data and secrets, readable by the account the
 * server runs as and nobody else. Set with chmod after creation, so the process's umask (which
 * `open` and `mkdir` apply) neither loosens nor over-tightens them.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The directories `mkdir -p` made: from `first` (what it returned) down to `dir`. */
function createdBetween(first: string | undefined, dir: string): string[] {
  if (first === undefined) return [];
  const below = relative(resolve(first), resolve(dir));
  const created = [resolve(first)];
  for (const segment of below === '' ? [] : below.split(sep)) created.push(resolve(created[created.length - 1], segment));
  return created;
}

/**
 * Makes a file or directory that was already there private, unless it cannot be changed:
 * another account owns it (left as its owner set it), its volume is read-only, it is gone.
 */
function tighten(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EROFS' && code !== 'ENOENT') throw error;
  }
}

/**
 * `mkdir -p dir`, every directory it creates 0700. With `tightenExisting`, `dir` itself is made
 * 0700 when it was already there too (a DATA_DIR an earlier version made 0755), unless another
 * account owns it: that one is left as its owner set it. Without it, a directory the operator
 * made (an export's `--out`) keeps its mode: the files in it are 0600 either way.
 */
export function makePrivateDir(dir: string, options: { tightenExisting?: boolean } = {}): void {
  const created = createdBetween(mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE }), dir);
  for (const path of created) chmodSync(path, PRIVATE_DIR_MODE);
  if (created.length === 0 && options.tightenExisting) tighten(dir, PRIVATE_DIR_MODE);
}

/** `makePrivateDir` for the async file system calls, for directories made while serving (blob folders). */
export async function makePrivateDirAsync(dir: string): Promise<void> {
  const created = createdBetween(await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE }), dir);
  for (const path of created) await chmod(path, PRIVATE_DIR_MODE);
}

/** Creates `path` and opens it with `flags` ('wx', or 'w' to replace a file of this process's own), mode 0600. */
export function openPrivateFileSync(path: string, flags: string): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE);
  fchmodSync(fd, PRIVATE_FILE_MODE);
  return fd;
}

/** `openPrivateFileSync` for the async file system calls. */
export async function openPrivateFile(path: string, flags: string): Promise<FileHandle> {
  const file = await open(path, flags, PRIVATE_FILE_MODE);
  try {
    await file.chmod(PRIVATE_FILE_MODE);
  } catch (error) {
    await file.close();
    throw error;
  }
  return file;
}

/**
 * Makes an SQLite database file private before SQLite opens it: creates it 0600 if absent
 * (SQLite would create it 0644), or tightens it and the WAL, shared-memory and journal files
 * beside it. SQLite creates those with the database file's own mode, so they stay 0600.
 */
export function makePrivateDatabaseFile(file: string): void {
  makePrivateDir(dirname(file));
  try {
    closeSync(openPrivateFileSync(file, 'wx'));
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) tighten(path, PRIVATE_FILE_MODE);
}
