import { statfsSync } from 'node:fs';
import { messageOf } from '../shared/domain/errors';

/** Free bytes below which a start that failed on DATA_DIR is put down to a full volume. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * A start that fails on a full or read-only DATA_DIR volume says only "disk I/O error" (SQLite
 * cannot size its WAL index), "ENOSPC … write" or "EROFS … unlink parley.lock": say which it is,
 * with the directory and what to do. Other errors are returned as they are.
 */
export function explainDataDirFailure(dataDir: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EROFS' || (typeof code === 'string' && code.startsWith('SQLITE_READONLY'))) {
    return new Error(`DATA_DIR ${dataDir} is on a read-only volume: mount it read-write and start again (${messageOf(error)})`, {
      cause: error,
    });
  }
  let free: number;
  try {
    const volume = statfsSync(dataDir);
    free = volume.bavail * volume.bsize;
  } catch {
    return error;
  }
  if (free >= NEARLY_FULL_BYTES) return error;
  return new Error(
    `DATA_DIR ${dataDir} is on a full volume (${free} bytes free): free space there and start again (${messageOf(error)})`,
    { cause: error },
  );
}
