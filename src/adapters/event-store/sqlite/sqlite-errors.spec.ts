import { EventStoreUnavailableError } from '../../../shared/ports/event-store.port';
import { asUnavailable, flushFailed, isLocked } from './sqlite-errors';

/** SQLite's failures as the port's errors, with reasons fit for a client. */
const sqliteError = (code: string) => Object.assign(new Error(`sqlite says ${code}`), { code });

describe('SQLite errors as the event log port sees them', () => {
  it.each([
    ['SQLITE_FULL', 'the disk is full'],
    ['SQLITE_READONLY_DBMOVED', 'the event log is read-only'],
    ['SQLITE_BUSY', 'the event log is locked by another process'],
    ['SQLITE_LOCKED_SHAREDCACHE', 'the event log is locked by another process'],
    ['SQLITE_IOERR_WRITE', 'the event log could not be written or read (SQLITE_IOERR_WRITE)'],
    ['SQLITE_CANTOPEN', 'the event log could not be written or read (SQLITE_CANTOPEN)'],
    ['SQLITE_NOMEM', 'the event log could not be written or read (SQLITE_NOMEM)'],
    ['SQLITE_CORRUPT', 'the event log file is damaged (SQLITE_CORRUPT)'],
    ['SQLITE_NOTADB', 'the event log file is damaged (SQLITE_NOTADB)'],
  ])('%s is "unavailable: %s", with the original as its cause', (code, reason) => {
    const original = sqliteError(code);
    const mapped = asUnavailable(original, true) as EventStoreUnavailableError;
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect(mapped.reason).toBe(reason);
    expect(mapped.cause).toBe(original);
  });

  it('leaves a constraint, a bug or an error already the port\'s as it is', () => {
    for (const error of [sqliteError('SQLITE_CONSTRAINT_UNIQUE'), new TypeError('a bug'), new EventStoreUnavailableError('the disk is full')]) {
      expect(asUnavailable(error, true)).toBe(error);
    }
  });

  it('says "closed" for anything that fails once the log is closed', () => {
    const mapped = asUnavailable(new TypeError('The database connection is not open'), false) as EventStoreUnavailableError;
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect(mapped.reason).toBe('the event log is closed');
  });

  it('knows a lock held by another connection', () => {
    expect([sqliteError('SQLITE_BUSY'), sqliteError('SQLITE_BUSY_SNAPSHOT'), sqliteError('SQLITE_LOCKED')].map(isLocked)).toEqual([true, true, true]);
    expect([sqliteError('SQLITE_FULL'), new Error('busy'), null].map(isLocked)).toEqual([false, false, false]);
  });

  it('names a failed flush by its errno code, or by its message', () => {
    expect(flushFailed(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }))).toBe('the event log could not be flushed to disk (EIO)');
    expect(flushFailed(new Error('odd'))).toBe('the event log could not be flushed to disk (odd)');
  });
});
