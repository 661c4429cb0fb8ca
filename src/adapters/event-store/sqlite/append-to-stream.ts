import type Database from 'better-sqlite3';
import {
  AppendResult,
  EventToAppend,
  ExpectedRevision,
  WrongExpectedRevisionError,
  newEventId,
} from '../../../shared/ports/event-store.port';
import { PACKED_METADATA, packEventTexts } from './packed-texts';
import { sqlitePosition } from './positions';
import { compactEventId, compactRecordedAt } from './schema';

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
  private readonly streamId: Database.Statement<[string], number>;
  private readonly newStream: Database.Statement<[string]>;
  private readonly dropStream: Database.Statement<[number]>;
  private readonly revisionOf: Database.Statement<[number], { revision: number }>;
  private readonly insert: Database.Statement<unknown[]>;

  constructor(private readonly db: Database.Database) {
    this.streamId = db.prepare<[string], number>('SELECT id FROM streams WHERE name = ?').pluck();
    this.newStream = db.prepare('INSERT INTO streams (name) VALUES (?)');
    this.dropStream = db.prepare('DELETE FROM streams WHERE id = ?');
    this.revisionOf = db.prepare('SELECT revision FROM event_rows WHERE stream = ? ORDER BY revision DESC LIMIT 1');
    this.insert = db.prepare(
      'INSERT INTO event_rows (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** Throws WrongExpectedRevisionError (nothing written) when the stream is not where `expected` says. */
  append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): StoredAppend {
    let stream = this.streamId.get(streamName);
    const current = stream === undefined ? undefined : this.revisionOf.get(stream)?.revision;
    const actual = current === undefined ? 'no_stream' : current;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'stream_exists' && actual !== 'no_stream') ||
      (typeof expected === 'number' && actual === expected);
    if (!ok) throw new WrongExpectedRevisionError(streamName, expected, actual);
    const created = stream === undefined;
    stream ??= Number(this.newStream.run(streamName).lastInsertRowid);
    try {
      return this.insertEvents(stream, current ?? -1, events);
    } catch (error) {
      // A one-event append runs without a savepoint (group-commit.ts): a refused event (a duplicate id) leaves no stream name behind.
      if (created && this.db.inTransaction) this.dropStream.run(stream);
      throw error;
    }
  }

  private insertEvents(stream: number, revision: number, events: readonly EventToAppend[]): StoredAppend {
    let first = 0;
    let position = 0;
    const now = BigInt(Date.now());
    for (const event of events) {
      revision++;
      const info = this.insert.run(
        stream,
        revision,
        compactEventId(event.id ?? newEventId()),
        event.type,
        packEventTexts(JSON.stringify(event.data ?? null), JSON.stringify(event.metadata ?? {})),
        PACKED_METADATA,
        event.recordedAt === undefined ? now : compactRecordedAt(event.recordedAt),
      );
      position = Number(info.lastInsertRowid);
      first ||= position;
    }
    return { result: { nextExpectedRevision: revision, position: sqlitePosition(position) }, first };
  }
}
