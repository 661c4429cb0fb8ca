import type Database from 'better-sqlite3';
import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SpaceLeft } from '../../shared/ports/event-store.port';

/**
 * How many more bytes this SQLite database can take, read without writing (pragmas and the
 * volume's free space). Two limits, either of which makes SQLite answer "database or disk is full":
 * - the page limit (`max_page_count`): pages beyond the file's size plus its free list;
 * - the volume: its free bytes, less the pages already committed to the WAL beyond the database
 *   file's end (the checkpoint thread may copy those into the file at any moment).
 * A rough figure by design: it is a warning for operators (a WAL frame per changed page and
 * index splits make an append take more than its payload), never a reason to refuse a write.
 */
export async function sqliteSpaceLeft(db: Database.Database, file: string): Promise<SpaceLeft> {
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  const pageCount = Number(db.pragma('page_count', { simple: true }));
  const freePages = Number(db.pragma('freelist_count', { simple: true }));
  const maxPages = Number(db.pragma('max_page_count', { simple: true }));
  const pageLimitBytes = (maxPages - pageCount + freePages) * pageSize;
  const [volume, database] = await Promise.all([statfs(dirname(file)), stat(file)]);
  const checkpointGrowth = Math.max(0, pageCount * pageSize - database.size);
  // A process running as root may also write into the file system's reserve (bfree); others may not (bavail).
  const volumeFree = (process.getuid?.() === 0 ? volume.bfree : volume.bavail) * volume.bsize;
  const volumeBytes = Math.max(0, volumeFree - checkpointGrowth + freePages * pageSize);
  return pageLimitBytes < volumeBytes ? { bytes: Math.max(0, pageLimitBytes), limitedBy: 'page_limit' } : { bytes: volumeBytes, limitedBy: 'volume' };
}
