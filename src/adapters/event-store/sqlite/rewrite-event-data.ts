import { existsSync } from 'node:fs';
import { ShredHistory } from '../../../shared/domain/personal-data';
import { compactSqliteFile, truncateWal } from '../../shared/sqlite-compaction';
import { openEventLogDatabase } from './schema';

/** One event as the log's file holds it: what a rewrite may read, and its data as stored (JSON). */
export interface StoredEventRow {
  readonly position: number;
  readonly stream: string;
  readonly type: string;
  readonly data: string;
  readonly recorded_at: string;
}

/**
 * New `data` (JSON) for events of a page, by position; the others stay as they are. `history`
 * reads the log as it stands in the rewrite (earlier pages already rewritten).
 */
export type EventDataRewrite = (page: readonly StoredEventRow[], history: ShredHistory) => Promise<ReadonlyMap<number, string>>;

export interface EventDataRewriteProgress {
  readonly read: number;
  readonly rewritten: number;
}

/** The trigger that keeps the log append-only against updates; the one against deletes is never lifted. */
const NO_UPDATE_TRIGGER = 'events_no_update';
const PAGE = 1_000;

/**
 * The one place the embedded event log is changed in place: the offline rewrite of events
 * written before their personal fields were sealed (`npm run admin -- data-dir:seal`). Only
 * `data` changes; positions, ids, streams, revisions, types, metadata and times stay.
 *
 * The whole rewrite is one transaction (the append-only trigger on updates is dropped and
 * created again, with its text as the file holds it, inside it), so a process killed midway
 * leaves the log as it was. Then the file is compacted (`compactSqliteFile`): the replaced data
 * is overwritten, the WAL emptied. The caller holds DATA_DIR's lock: no server writes meanwhile.
 */
export async function rewriteEventData(
  file: string,
  rewrite: EventDataRewrite,
  onPage: (progress: EventDataRewriteProgress) => void = () => undefined,
): Promise<EventDataRewriteProgress> {
  if (!existsSync(file)) throw new Error(`there is no event log at ${file}`);
  const db = openEventLogDatabase(file);
  try {
    // What a killed server left in the WAL is in the file first.
    truncateWal(db, file);
    const trigger = db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(NO_UPDATE_TRIGGER);
    if (!trigger) throw new Error(`${file} has no ${NO_UPDATE_TRIGGER} trigger: not an event log this version knows`);
    const page = db.prepare<[number, number], StoredEventRow>('SELECT position, stream, type, data, recorded_at FROM events WHERE position > ? ORDER BY position LIMIT ?');
    const update = db.prepare<[string, number]>('UPDATE event_rows SET data = ? WHERE position = ?');
    const streamPage = db.prepare<[string, number, number], { type: string; data: string }>(
      'SELECT type, data FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
    );
    const history: ShredHistory = {
      readStream: async (streamName, { fromRevision, maxCount }) =>
        streamPage.all(streamName, fromRevision, maxCount).map((row) => ({ type: row.type, data: JSON.parse(row.data) as unknown })),
    };
    let progress = { read: 0, rewritten: 0 };
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(`DROP TRIGGER ${NO_UPDATE_TRIGGER}`);
      for (let after = 0; ; ) {
        const rows = page.all(after, PAGE);
        if (rows.length === 0) break;
        const changed = await rewrite(rows, history);
        for (const [position, data] of changed) update.run(data, position);
        after = rows[rows.length - 1].position;
        progress = { read: progress.read + rows.length, rewritten: progress.rewritten + changed.size };
        onPage(progress);
      }
      db.exec(trigger.sql);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
    compactSqliteFile(db, file);
    return progress;
  } finally {
    db.close();
  }
}
