import { statfsSync } from 'node:fs';
import { messageOf } from '../shared/domain/errors';

/** Free bytes below which a start that failed on DATA_DIR is put down to a full volume. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * A start that fails on a full DATA_DIR volume says only "disk I/O error" (SQLite cannot size
 * its WAL index) or "ENOSPC … write", naming no directory: when the volume is (nearly) full,
 * say so, with the directory and what to do. Other errors are returned as they are.
 */
export function explainFullDataDir(dataDir: string, error: unknown): unknown {
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
