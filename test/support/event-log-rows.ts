import Database from 'better-sqlite3';
import { eventTextsOf } from '../../src/adapters/event-store/sqlite/packed-texts';

/** One event as the log's `events` view shows it, its data and metadata as JSON texts (packed rows inflated). */
export interface EventRow {
  readonly position: number;
  readonly stream: string;
  readonly revision: number;
  readonly event_id: string;
  readonly type: string;
  readonly data: string;
  readonly metadata: string;
  readonly recorded_at: string;
}

type StoredRow = Omit<EventRow, 'data' | 'metadata'> & { data: string | Buffer; metadata: string | Buffer };

/**
 * Every row of a log (an open connection, or a file opened read-only), in order, with the values
 * `events` shows, data and metadata as text whether the row keeps them packed or not (schema
 * version 3). `where` narrows the rows (SQL over `events`' columns, `params` bound to it).
 */
export function eventRowsOf(log: Database.Database | string, where = 'TRUE', ...params: unknown[]): EventRow[] {
  const db = typeof log === 'string' ? new Database(log, { readonly: true, fileMustExist: true }) : log;
  try {
    const rows = db
      .prepare(`SELECT position, stream, revision, event_id, type, data, metadata, recorded_at FROM events WHERE ${where} ORDER BY position`)
      .all(...params) as StoredRow[];
    return rows.map((row) => ({ ...row, ...eventTextsOf(row.data, row.metadata) }));
  } finally {
    if (typeof log === 'string') db.close();
  }
}
