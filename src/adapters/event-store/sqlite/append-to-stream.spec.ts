import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventToAppend, ExpectedRevision, WrongExpectedRevisionError } from '../../../shared/ports/event-store.port';
import { eventRowsOf } from '../../../../test/support/event-log-rows';
import { StreamAppender } from './append-to-stream';
import { sqlitePosition } from './positions';
import { openEventLogDatabase } from './schema';

/** One append's rows, on a real file, inside a transaction the spec holds (as GroupCommit does). */
const OCCURRED = { occurred_at: '2026-01-01T00:00:00.000Z' };
const event = (n: number, extra: Partial<EventToAppend> = {}): EventToAppend => ({ type: 'Counted', data: { n }, metadata: OCCURRED, ...extra });

describe('StreamAppender', () => {
  let dir: string;
  let db: Database.Database;
  let appender: StreamAppender;
  const rows = () => eventRowsOf(db);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-append-to-stream-'));
    db = openEventLogDatabase(join(dir, 'events.sqlite'));
    appender = new StreamAppender(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the events after the stream\'s last revision, each at its position, and answers the next expected revision and the last position', () => {
    expect(appender.append('other', [event(0)], 'no_stream')).toEqual({ result: { nextExpectedRevision: 0, position: sqlitePosition(1) }, first: 1 });
    const stored = appender.append('a', [event(1, { id: 'e-1', recordedAt: '2026-02-02T00:00:00.000Z' }), event(2, { id: 'e-2' })], 'no_stream');
    expect(stored).toEqual({ result: { nextExpectedRevision: 1, position: sqlitePosition(3) }, first: 2 });
    expect(appender.append('a', [event(3)], 1)).toEqual({ result: { nextExpectedRevision: 2, position: sqlitePosition(4) }, first: 4 });

    const [, first, second, third] = rows();
    expect(first).toEqual({
      position: 2,
      stream: 'a',
      revision: 0,
      event_id: 'e-1',
      type: 'Counted',
      data: '{"n":1}',
      metadata: JSON.stringify(OCCURRED),
      recorded_at: '2026-02-02T00:00:00.000Z',
    });
    expect(second).toMatchObject({ position: 3, revision: 1, event_id: 'e-2' });
    // An event without an id or a time gets a fresh id and the time of the append.
    expect(third).toMatchObject({ position: 4, revision: 2, event_id: expect.stringMatching(/.{16,}/) });
    expect(Number.isNaN(Date.parse(third.recorded_at))).toBe(false);
  });

  it.each<[string, ExpectedRevision, 'stored' | number | 'no_stream']>([
    ['any, on a stream that exists', 'any', 'stored'],
    ['stream_exists, on a stream that exists', 'stream_exists', 'stored'],
    ['its last revision', 1, 'stored'],
    ['no_stream, on a stream that exists', 'no_stream', 1],
    ['an older revision', 0, 1],
    ['a revision it has not reached', 2, 1],
  ])('checks the expected revision (%s), and refuses a wrong one writing nothing', (_case, expected, outcome) => {
    appender.append('a', [event(1), event(2)], 'no_stream');
    const before = rows();
    if (outcome === 'stored') {
      expect(appender.append('a', [event(3)], expected).result.nextExpectedRevision).toBe(2);
    } else {
      expect(() => appender.append('a', [event(3)], expected)).toThrow(new WrongExpectedRevisionError('a', expected, outcome));
      expect(rows()).toEqual(before);
    }
  });

  it('on a stream that does not exist: takes any and no_stream, refuses stream_exists and a revision', () => {
    expect(appender.append('new-1', [event(1)], 'any').result.nextExpectedRevision).toBe(0);
    expect(appender.append('new-2', [event(1)], 'no_stream').result.nextExpectedRevision).toBe(0);
    expect(() => appender.append('new-3', [event(1)], 'stream_exists')).toThrow(new WrongExpectedRevisionError('new-3', 'stream_exists', 'no_stream'));
    expect(() => appender.append('new-3', [event(1)], 0)).toThrow(new WrongExpectedRevisionError('new-3', 0, 'no_stream'));
    expect(db.prepare('SELECT DISTINCT stream FROM events ORDER BY stream').pluck().all()).toEqual(['new-1', 'new-2']);
  });
});
