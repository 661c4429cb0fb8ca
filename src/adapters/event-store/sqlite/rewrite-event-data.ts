import { existsSync } from 'node:fs';
import { ShredHistory } from '../../../shared/domain/personal-data';
import { compactSqliteFile, truncateWal } from '../../shared/sqlite-compaction';
import { PACKED_METADATA, eventTextsOf, packEventTexts } from './packed-texts';
import { EVENT_COLUMNS as C, EVENT_ROWS, openEventLogDatabase } from './schema';

/** One event as the log's file holds it: what a rewrite may read, and its data (JSON; a packed row's inflated). */
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

/** A row as `event_rows` holds it: data and metadata text, or packed in one blob (packed-texts.ts). */
type StoredRow = Omit<StoredEventRow, 'data'> & { readonly data: string | Buffer; readonly metadata: string | Buffer };

/** A stored row's texts, and whether they were packed (a rewrite keeps that). */
const textsOf = (row: StoredRow) => ({ ...eventTextsOf(row.data, row.metadata), packed: typeof row.data !== 'string' });

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
    const page = db.prepare<[number, number], StoredRow>(
      `SELECT ${C.position} AS position, ${C.stream} AS stream, ${C.type} AS type, ${C.data} AS data, ${C.metadata} AS metadata, ${C.recorded_at} AS recorded_at ` +
        `FROM ${EVENT_ROWS} WHERE r.position > ? ORDER BY r.position LIMIT ?`,
    );
    const update = db.prepare<[string | Buffer, string | Buffer, number]>('UPDATE event_rows SET data = ?, metadata = ? WHERE position = ?');
    const streamPage = db.prepare<[string, number, number], { type: string; data: string | Buffer; metadata: string | Buffer }>(
      `SELECT ${C.type} AS type, ${C.data} AS data, ${C.metadata} AS metadata FROM ${EVENT_ROWS} WHERE s.name = ? AND r.revision >= ? ORDER BY r.revision LIMIT ?`,
    );
    const history: ShredHistory = {
      readStream: async (streamName, { fromRevision, maxCount }) =>
        streamPage.all(streamName, fromRevision, maxCount).map((row) => ({ type: row.type, data: JSON.parse(eventTextsOf(row.data, row.metadata).data) as unknown })),
    };
    let progress = { read: 0, rewritten: 0 };
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(`DROP TRIGGER ${NO_UPDATE_TRIGGER}`);
      for (let after = 0; ; ) {
        const stored = page.all(after, PAGE);
        if (stored.length === 0) break;
        const texts = new Map(stored.map((row) => [row.position, textsOf(row)]));
        const rows = stored.map(({ position, stream, type, recorded_at }): StoredEventRow => ({ position, stream, type, data: texts.get(position)!.data, recorded_at }));
        const changed = await rewrite(rows, history);
        for (const [position, data] of changed) {
          const row = texts.get(position);
          if (!row) throw new Error(`a rewrite changed event ${position}, which is not on the page it was given`);
          // A packed row stays packed (its metadata is in the same blob); a text row changes only its data.
          if (row.packed) update.run(packEventTexts(data, row.metadata), PACKED_METADATA, position);
          else update.run(data, row.metadata, position);
        }
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
