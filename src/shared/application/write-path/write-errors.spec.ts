import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { conflict, DomainError } from '../../domain/errors';
import {
  AppendOutcomeUnknownError,
  AppendTooLargeError,
  EventStoreUnavailableError,
  EventToAppend,
  newEventId,
  WrongExpectedRevisionError,
} from '../../ports/event-store.port';
import { withOverrides } from '../../../../test/support/event-store-overrides';
import { explainFailedAppend, FailedAppend } from './write-errors';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const events = (...ns: number[]): EventToAppend[] => ns.map((n) => ({ id: newEventId(), type: 'Counted', data: { n }, metadata: meta }));

/** What the commands of the failed append are told, as the HTTP layer would show it. */
const answerOf = (failure: FailedAppend): string =>
  failure.kind === 'refused' ? `${failure.error.code}: ${failure.error.description}` : failure.kind;

describe('explainFailedAppend tells what a failed append means, from the error and, where it cannot tell, from the log', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-write-errors-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A store whose reads fail: an explanation that needs none still comes out. */
  const unreadable = () => withOverrides(store, { readStream: async () => Promise.reject(new Error('unreachable')) });

  it('another writer appended first: a conflict, decided again', async () => {
    const error = new WrongExpectedRevisionError('s', 0, 1);
    expect(await explainFailedAppend(unreadable(), 's', 0, events(1), error)).toEqual({ kind: 'conflict' });
  });

  it('more than the store takes in one append: too large, with the refusal', async () => {
    const error = new AppendTooLargeError('s', 100, 200);
    expect(await explainFailedAppend(unreadable(), 's', 0, events(1), error)).toEqual({ kind: 'too_large', error });
  });

  it('a refusal the store explains is answered as it is', async () => {
    const error = conflict('stream_deleted', 'deleted permanently');
    expect(await explainFailedAppend(unreadable(), 's', 0, events(1), error)).toEqual({ kind: 'refused', error });
  });

  it('a store that says it wrote nothing: not saved, without reading back', async () => {
    const failure = await explainFailedAppend(unreadable(), 's', 0, events(1), new EventStoreUnavailableError('EventStoreDB is unreachable'));
    expect(answerOf(failure)).toBe('unavailable/storage_unavailable: The change was not saved: EventStoreDB is unreachable; it is safe to retry');
    expect((failure as { error: DomainError }).error.cause).toBeInstanceOf(EventStoreUnavailableError);
  });

  it('a store that wrote it but cannot say it will last: may or may not be saved, whatever the log shows now', async () => {
    const appended = events(1);
    await store.append('s', appended, 'no_stream');
    const error = new AppendOutcomeUnknownError('the event log could not be flushed to disk (EIO)');
    expect(answerOf(await explainFailedAppend(store, 's', 'no_stream', appended, error))).toBe(
      'unavailable/storage_unavailable: The event log failed during the write (the event log could not be flushed to disk (EIO)): the change may or may not be saved; read it before retrying',
    );
  });

  it('any other failure is read back: the events found in the log are answered as written, where they landed', async () => {
    await store.append('s', events(1), 'no_stream');
    const appended = events(2, 3);
    const { position } = await store.append('s', appended, 0);
    expect(await explainFailedAppend(store, 's', 0, appended, new Error('connection reset'))).toEqual({
      kind: 'landed',
      result: { nextExpectedRevision: 2, position },
    });
  });

  it('read back and not found (or others found in their place): not saved', async () => {
    await store.append('s', events(1), 'no_stream');
    expect(answerOf(await explainFailedAppend(store, 's', 'no_stream', events(1), new Error('connection reset')))).toBe(
      'unavailable/storage_unavailable: The change was not saved: the event log failed; it is safe to retry',
    );
  });

  it('an unconfirmed append (a timeout) found when read back is written; not found, it may still land', async () => {
    const timeout = () => new AppendOutcomeUnknownError('EventStoreDB did not confirm the write in time', { foundMeansKept: true });
    const appended = events(1);
    expect(answerOf(await explainFailedAppend(store, 's', 'no_stream', appended, timeout()))).toBe(
      'unavailable/storage_unavailable: The event log failed during the write (EventStoreDB did not confirm the write in time): the change may or may not be saved; read it before retrying',
    );
    await store.append('s', appended, 'no_stream');
    expect((await explainFailedAppend(store, 's', 'no_stream', appended, timeout())).kind).toBe('landed');
  });

  it('a read-back that fails: may or may not be saved', async () => {
    expect(answerOf(await explainFailedAppend(unreadable(), 's', 0, events(1), new Error('connection reset')))).toBe(
      'unavailable/storage_unavailable: The event log failed during the write (the event log failed) and could not be read back: the change may or may not be saved; read it before retrying',
    );
  });
});
