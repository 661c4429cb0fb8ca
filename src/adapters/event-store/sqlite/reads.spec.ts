import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventMetadata } from '../../../shared/domain/event';
import { StreamAppender } from './append-to-stream';
import { sqlitePosition } from './positions';
import { LogReads } from './reads';
import { openEventLogDatabase } from './schema';

/**
 * The log's reads alone, on a real file written by StreamAppender. `all` builds each event's
 * JSON in SQL and parses a page at once, `stream` turns rows into objects: both must give the
 * same events, whatever their data holds.
 */
describe('LogReads', () => {
  let dir: string;
  let db: Database.Database;
  let reads: LogReads;
  let appender: StreamAppender;
  const append = (stream: string, data: unknown[], metadata: EventMetadata = { occurred_at: '2026-01-01T00:00:00.000Z' }) =>
    db.transaction(() => appender.append(stream, data.map((d) => ({ type: `T${stream.length}`, data: d, metadata })), 'any'))();
  const ALL = Number.MAX_SAFE_INTEGER;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-log-reads-'));
    db = openEventLogDatabase(join(dir, 'events.sqlite'));
    reads = new LogReads(db);
    appender = new StreamAppender(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the same events through the spliced JSON of the whole log as through the rows of a stream', () => {
    const awkward = [
      { text: 'quote " backslash \\ newline \n tab \t', emoji: '🦜', nested: { list: [1, 2.5, null, true], empty: {} } },
      null,
      'a string',
      42,
      [{ deep: [[]] }],
    ];
    append('room-1', awkward, { occurred_at: '2026-01-01T00:00:00.000Z', 'odd key "': 'ü' });
    const all = reads.all(0, 100, ALL);
    expect(all).toEqual(reads.stream('room-1', {}, ALL));
    expect(all.map((e) => e.data)).toEqual(awkward);
    expect(all[0]).toEqual({
      id: expect.any(String),
      streamName: 'room-1',
      revision: 0,
      position: sqlitePosition(1),
      type: 'T6',
      data: awkward[0],
      metadata: { occurred_at: '2026-01-01T00:00:00.000Z', 'odd key "': 'ü' },
      recordedAt: expect.any(String),
    });
    // Keys in the same order too (what a client serialising an event again would see).
    expect(Object.keys(all[0])).toEqual(Object.keys(reads.stream('room-1', { maxCount: 1 }, ALL)[0]));
  });

  it('pages the log after a position, stops short of `below`, and filters by event type and stream prefix', () => {
    append('users', [1, 2]);
    append('rooms-a', [3]);
    append('rooms-b', [4]);
    append('users', [5]);
    expect(reads.all(0, 2, ALL).map((e) => e.data)).toEqual([1, 2]);
    expect(reads.all(2, 100, ALL).map((e) => e.data)).toEqual([3, 4, 5]);
    expect(reads.all(0, 100, 4).map((e) => e.data)).toEqual([1, 2, 3]);
    expect(reads.all(0, 100, ALL, { streamPrefixes: ['rooms-'] }).map((e) => e.data)).toEqual([3, 4]);
    expect(reads.all(0, 100, ALL, { eventTypes: ['T5'] }).map((e) => e.data)).toEqual([1, 2, 5]);
    expect(reads.all(0, 100, ALL, { eventTypes: ['T7'], streamPrefixes: ['rooms-b', 'users'] }).map((e) => e.data)).toEqual([4]);
  });

  it('returns a page longer than one JSON.parse takes, whole and in order', () => {
    append('big', Array.from({ length: 2_500 }, (_, i) => ({ i })));
    const page = reads.all(0, 3_000, ALL);
    expect(page).toHaveLength(2_500);
    expect(page.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
  });

  it('reads a stream forwards or backwards from a revision, at most maxCount, stopping short of `below`', () => {
    append('s', [0, 1, 2, 3]);
    append('other', ['x']);
    append('s', [4]);
    const data = (options: Parameters<LogReads['stream']>[1], below = ALL) => reads.stream('s', options, below).map((e) => e.data);
    expect(data({})).toEqual([0, 1, 2, 3, 4]);
    expect(data({ fromRevision: 2, maxCount: 2 })).toEqual([2, 3]);
    expect(data({ direction: 'backwards' })).toEqual([4, 3, 2, 1, 0]);
    expect(data({ direction: 'backwards', fromRevision: 1 })).toEqual([1, 0]);
    expect(data({}, 6)).toEqual([0, 1, 2, 3]);
    expect(reads.stream('none', {}, ALL)).toEqual([]);
  });

  it('names the last position below a bound, or none', () => {
    expect(reads.headBelow(ALL)).toBeNull();
    append('s', [1, 2, 3]);
    expect(reads.headBelow(ALL)).toBe(sqlitePosition(3));
    expect(reads.headBelow(3)).toBe(sqlitePosition(2));
    expect(reads.headBelow(1)).toBeNull();
  });
});
