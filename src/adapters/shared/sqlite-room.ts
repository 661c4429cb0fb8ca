import type Database from 'better-sqlite3';
import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Pages one insert may take beside its payload: a new leaf of the table and, for each of its two
 * unique indexes, a split leaf and a split parent on every level of a tree (depth ≤ 4 below
 * billions of rows).
 */
const SPLIT_PAGES = 16;
/** A WAL frame's header, written before each page. */
const WAL_FRAME_HEADER_BYTES = 24;

/**
 * Why an insert of `bytes` into this SQLite database would fail for room now, or null when it
 * fits; read without writing (pragmas and the volume's free space). Two limits, either of which
 * makes SQLite answer "database or disk is full":
 * - the page limit (`max_page_count`): pages beyond the file's size plus its free list;
 * - the volume: the WAL takes a frame per changed page before a checkpoint copies it into the
 *   database file, which grows by the pages its free list cannot give, and by the pages already
 *   committed to the WAL beyond the file's end (a checkpoint may copy those at any moment).
 * Room for small writes says nothing about a large one: a send that needs more still fails while
 * a cursor or a typing indicator fits, so the caller asks for the largest write it must take.
 */
export async function sqliteRoomFor(db: Database.Database, file: string, bytes: number): Promise<string | null> {
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  const pageCount = Number(db.pragma('page_count', { simple: true }));
  const freePages = Number(db.pragma('freelist_count', { simple: true }));
  const maxPages = Number(db.pragma('max_page_count', { simple: true }));
  // Overflow pages carry pageSize - 4 bytes each (their next-page pointer).
  const pagesNeeded = Math.ceil(bytes / (pageSize - 4)) + SPLIT_PAGES;
  const pagesLeft = maxPages - pageCount + freePages;
  if (pagesLeft < pagesNeeded) {
    return `the disk is full: the event log's page limit leaves ${pagesLeft} pages, an append of ${bytes} bytes needs up to ${pagesNeeded}`;
  }
  const [volume, database] = await Promise.all([statfs(dirname(file)), stat(file)]);
  const checkpointGrowth = Math.max(0, pageCount * pageSize - database.size);
  const bytesNeeded = pagesNeeded * (pageSize + WAL_FRAME_HEADER_BYTES) + Math.max(0, pagesNeeded - freePages) * pageSize + checkpointGrowth;
  // A process running as root may also write into the file system's reserve (bfree); others may not (bavail).
  const bytesFree = (process.getuid?.() === 0 ? volume.bfree : volume.bavail) * volume.bsize;
  if (bytesFree < bytesNeeded) {
    return `the disk is full: ${bytesFree} bytes free on the event log's volume, an append of ${bytes} bytes needs up to ${bytesNeeded}`;
  }
  return null;
}
