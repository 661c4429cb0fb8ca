import { messageOf } from '../../../shared/domain/errors';
import { EventStoreUnavailableError } from '../../../shared/ports/event-store.port';

/** SQLite's result code of an error (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`…), if it is one of SQLite's. */
export const sqliteCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
};

/** Another connection holds the lock (another process writing the same file). */
export const isLocked = (error: unknown): boolean => /^SQLITE_(BUSY|LOCKED)/.test(sqliteCode(error) ?? '');

/** Why a flush of the WAL failed, in words fit for a client. */
export const flushFailed = (error: unknown): string =>
  `the event log could not be flushed to disk (${(error as NodeJS.ErrnoException | null)?.code ?? messageOf(error)})`;

/**
 * SQLite's storage failures as the port's "unavailable, nothing written", with a reason fit
 * for a client (SQLite's own messages are, but its extended codes say more to an operator).
 * Other errors (a bug, a constraint) stay as they are. `open`: whether the log is still open
 * (a call on a closed one fails as "closed", whatever SQLite said).
 */
export function asUnavailable(error: unknown, open: boolean): unknown {
  if (error instanceof EventStoreUnavailableError) return error;
  if (!open) return new EventStoreUnavailableError('the event log is closed', { cause: error });
  const code = sqliteCode(error);
  if (!code) return error;
  const reason = code.startsWith('SQLITE_FULL')
    ? 'the disk is full'
    : code.startsWith('SQLITE_READONLY')
      ? 'the event log is read-only'
      : isLocked(error)
        ? 'the event log is locked by another process'
        : /^SQLITE_(IOERR|CANTOPEN|PERM|PROTOCOL|NOMEM|NOLFS)/.test(code)
          ? `the event log could not be written or read (${code})`
          : /^SQLITE_(CORRUPT|NOTADB)/.test(code)
            ? `the event log file is damaged (${code})`
            : undefined;
  return reason ? new EventStoreUnavailableError(reason, { cause: error }) : error;
}
