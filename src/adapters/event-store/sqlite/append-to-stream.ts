import type Database from 'better-sqlite3';
import {
  AppendResult,
  EventToAppend,
  ExpectedRevision,
  WrongExpectedRevisionError,
  newEventId,
} from '../../../shared/ports/event-store.port';
import { sqlitePosition } from './positions';

/** An append's events, stored: the port's answer, and the first position it took. */
export interface StoredAppend {
  readonly result: AppendResult;
  readonly first: number;
}

/**
 * Writes one append's events to its stream, after checking the expected revision against the
 * stream's last one (in the caller's transaction: nothing is committed here). Statements are
 * prepared once.
 */
export class StreamAppender {
  private readonly revisionOf: Database.Statement<[string], { revision: number }>;
  private readonly insert: Database.Statement<unknown[]>;

  constructor(db: Database.Database) {
    this.revisionOf = db.prepare('SELECT revision FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1');
    this.insert = db.prepare(
      'INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** Throws WrongExpectedRevisionError (nothing written) when the stream is not where `expected` says. */
  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): StoredAppend {
    const current = this.revisionOf.get(streamName)?.revision;
    const actual = current === undefined ? 'no_stream' : current;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'stream_exists' && actual !== 'no_stream') ||
      (typeof expected === 'number' && actual === expected);
    if (!ok) throw new WrongExpectedRevisionError(streamName, expected, actual);
    let revision = current ?? -1;
    let first = 0;
    let position = 0;
    const now = new Date().toISOString();
    for (const event of events) {
      revision++;
      const info = this.insert.run(
        streamName,
        revision,
        event.id ?? newEventId(),
        event.type,
        JSON.stringify(event.data ?? null),
        JSON.stringify(event.metadata ?? {}),
        event.recordedAt ?? now,
      );
      position = Number(info.lastInsertRowid);
      first ||= position;
    }
    return { result: { nextExpectedRevision: revision, position: sqlitePosition(position) }, first };
  }
}
