import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStoreUnavailableError, EventToAppend, WrongExpectedRevisionError } from '../../../shared/ports/event-store.port';
import { GroupCommit } from './group-commit';
import { sqlitePosition } from './positions';
import { openEventLogDatabase } from './schema';
import { Commit } from './wal-durability';

/**
 * The writer alone on a real SQLite file: which appends share a transaction, which fail alone,
 * and how it waits for another connection's write lock. Its commits are answered here at once
 * (durability is WalDurability's concern).
 */
const OCCURRED = { occurred_at: '2026-01-01T00:00:00.000Z' };
const event = (n: number, id?: string): EventToAppend => ({ id, type: 'Counted', data: { n }, metadata: OCCURRED });
/** Lets the queued group's flush (scheduled with setImmediate) run. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  let dir: string;
  let db: Database.Database;
  let commits: Commit[];
  let writer: GroupCommit;
  const rows = () => db.prepare('SELECT position, stream, revision FROM events ORDER BY position').all();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-group-commit-'));
    db = openEventLogDatabase(join(dir, 'events.sqlite'));
    commits = [];
    writer = new GroupCommit(
      db,
      (commit) => {
        commits.push(commit);
        for (const [waiter, result] of commit.answers) waiter.resolve(result);
      },
      200,
    );
  });
  afterEach(() => {
    writer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits the appends of one turn of the event loop in one transaction, each with its own revisions', async () => {
    const results = await Promise.all([
      writer.append('a', [event(1), event(2)], 'no_stream'),
      writer.append('b', [event(1)], 'no_stream'),
      writer.append('a', [event(3)], 'any'),
    ]);
    expect(results).toEqual([
      { nextExpectedRevision: 1, position: sqlitePosition(2) },
      { nextExpectedRevision: 0, position: sqlitePosition(3) },
      { nextExpectedRevision: 2, position: sqlitePosition(4) },
    ]);
    expect(commits.map(({ first, last, answers }) => ({ first, last, answered: answers.length }))).toEqual([{ first: 1, last: 4, answered: 3 }]);
  });

  it('fails an append alone when its expected revision is wrong, or when one of its events cannot be stored, leaving nothing of it', async () => {
    await writer.append('a', [event(0, 'taken-id')], 'no_stream');
    const outcomes = await Promise.allSettled([
      writer.append('a', [event(1)], 'no_stream'),
      writer.append('b', [event(1), event(2, 'taken-id')], 'no_stream'),
      writer.append('c', [event(1)], 'no_stream'),
    ]);
    expect(outcomes[0]).toEqual({ status: 'rejected', reason: new WrongExpectedRevisionError('a', 'no_stream', 0) });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: { nextExpectedRevision: 0, position: sqlitePosition(2) } });
    expect(rows()).toEqual([
      { position: 1, stream: 'a', revision: 0 },
      { position: 2, stream: 'c', revision: 0 },
    ]);
    expect(commits.map(({ first, last }) => [first, last])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('waits for the write lock another connection holds, without blocking the event loop, and commits once it is free', async () => {
    const other = new Database(join(dir, 'events.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    writer = new GroupCommit(db, (commit) => commit.answers.forEach(([waiter, result]) => waiter.resolve(result)), 60_000);
    let settled = false;
    const appended = writer.append('a', [event(1)], 'no_stream').finally(() => (settled = true));
    await nextTurn();
    await nextTurn();
    expect(settled).toBe(false);
    other.exec('COMMIT');
    other.close();
    expect(await appended).toEqual({ nextExpectedRevision: 0, position: sqlitePosition(1) });
  });

  it('fails an append that waited lockTimeoutMs for the lock as "locked by another process", writing nothing', async () => {
    const other = new Database(join(dir, 'events.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await writer.append('a', [event(1)], 'no_stream').catch((e: unknown) => e);
      expect(error).toEqual(new EventStoreUnavailableError('the event log is locked by another process'));
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(rows()).toEqual([]);
  });

  it('at close, commits what is queued and refuses what still waits for another process\'s lock', async () => {
    const queued = writer.append('a', [event(1)], 'no_stream');
    writer.close();
    expect(await queued).toEqual({ nextExpectedRevision: 0, position: sqlitePosition(1) });

    writer = new GroupCommit(db, () => undefined, 60_000);
    const other = new Database(join(dir, 'events.sqlite'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const waiting = writer.append('b', [event(1)], 'no_stream').catch((e: unknown) => e);
      await nextTurn();
      writer.close();
      expect(await waiting).toEqual(new EventStoreUnavailableError('the event log was closed'));
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(rows()).toEqual([{ position: 1, stream: 'a', revision: 0 }]);
  });

  it('refuses a whole group as "the disk is full" when SQLite rolls the transaction back, storing none of it', async () => {
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
    // Random text: the log deflates what it stores (packed-texts.ts), and this must not fit.
    const big: EventToAppend = { type: 'Big', data: { text: randomBytes(64 * 1024).toString('base64') }, metadata: OCCURRED };
    const outcomes = await Promise.allSettled([writer.append('a', [event(1)], 'no_stream'), writer.append('b', [big], 'no_stream')]);
    for (const outcome of outcomes) {
      expect(outcome).toEqual({ status: 'rejected', reason: new EventStoreUnavailableError('the disk is full') });
    }
    expect(rows()).toEqual([]);
    expect(commits).toEqual([]);
  });
});
