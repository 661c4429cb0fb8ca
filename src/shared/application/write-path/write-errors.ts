import { conflict, DomainError } from '../../domain/errors';
import {
  AppendOutcomeUnknownError,
  AppendResult,
  AppendTooLargeError,
  EventStore,
  EventStoreUnavailableError,
  EventToAppend,
  ExpectedRevision,
  WrongExpectedRevisionError,
} from '../../ports/event-store.port';

/*
 * What the write path answers about the log, and it is always the truth: a failure before or
 * at the append says the change was not saved (an append that failed is read back, so one the
 * store did write is never reported as lost), unless the store cannot tell whether it wrote it
 * (a timeout, a failed flush): that says it may or may not be saved; only a failure after the
 * append says it was saved.
 */

const reasonOf = (error: unknown): string =>
  error instanceof EventStoreUnavailableError || error instanceof AppendOutcomeUnknownError ? error.reason : 'the event log failed';

const withCause = (error: DomainError, cause: unknown): DomainError => Object.assign(error, { cause });

/** Nothing was appended: a retry cannot duplicate anything. */
export const changeNotSaved = (cause: unknown) =>
  withCause(
    new DomainError('unavailable', 'storage_unavailable', `The change was not saved: ${reasonOf(cause)}; it is safe to retry`),
    cause,
  );

/** The state a decision needs could not be read: nothing was decided, so nothing was written. */
export const eventLogUnreadable = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'storage_unavailable',
      `The event log could not be read: ${reasonOf(cause)}; nothing was changed, it is safe to retry`,
    ),
    cause,
  );

export const outcomeUnknown = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'storage_unavailable',
      cause instanceof AppendOutcomeUnknownError
        ? `The event log failed during the write (${reasonOf(cause)}): the change may or may not be saved; read it before retrying`
        : `The event log failed during the write (${reasonOf(cause)}) and could not be read back: the change may or may not be saved; read it before retrying`,
    ),
    cause,
  );

/** One command's events are more than the log takes in one append: refused whole, nothing written. */
export const changeTooLarge = (cause: AppendTooLargeError) =>
  withCause(
    new DomainError(
      'payload_too_large',
      'change_too_large',
      `The change is larger than the event log accepts in one write (${cause.bytes} bytes of events, at most ${cause.maxBytes}); nothing was saved`,
    ),
    cause,
  );

/** The append is in the log; only confirming the read models failed (for an unexpected reason). */
export const savedUnconfirmed = (cause: unknown) =>
  withCause(
    new DomainError(
      'unavailable',
      'projection_lag',
      'The change was saved, but whether the read models reflect it could not be checked; do not send it again, read it back shortly',
    ),
    cause,
  );

/** Other writers kept changing the stream under the command, as often as it may be decided again: nothing was saved. */
export const concurrentModification = () =>
  conflict('concurrent_modification', 'The resource was changed by another request at the same time; retry');

/** What an append that threw means for the commands in it. */
export type FailedAppend =
  /** Decided on a state another writer has moved on from: nothing written, decide again. */
  | { readonly kind: 'conflict' }
  /** More than the store takes in one append: nothing written. */
  | { readonly kind: 'too_large'; readonly error: AppendTooLargeError }
  /** Every command in it is answered with `error`, which says whether it may have been saved. */
  | { readonly kind: 'refused'; readonly error: DomainError }
  /** The store did write it after all (found when read back), here. */
  | { readonly kind: 'landed'; readonly result: AppendResult };

const refused = (error: DomainError): FailedAppend => ({ kind: 'refused', error });

/**
 * Tells what `error`, thrown by appending `appended` to `stream` at `expected`, means. A store
 * may fail after writing (a lost connection): then the log, not the error, says which, and only
 * a store that can say the write never left (any error but "unknown") is believed when the
 * events are not there.
 */
export async function explainFailedAppend(
  events: EventStore,
  stream: string,
  expected: ExpectedRevision,
  appended: readonly EventToAppend[],
  error: unknown,
): Promise<FailedAppend> {
  if (error instanceof WrongExpectedRevisionError) return { kind: 'conflict' };
  if (error instanceof AppendTooLargeError) return { kind: 'too_large', error };
  // Refusals that wrote nothing: a conflict the store knows of, a store that could not write.
  if (error instanceof DomainError) return refused(error);
  if (error instanceof EventStoreUnavailableError) return refused(changeNotSaved(error));
  // The store wrote it but cannot say it will last: reading it back would prove nothing.
  if (error instanceof AppendOutcomeUnknownError && !error.foundMeansKept) return refused(outcomeUnknown(error));
  let found: AppendResult | null;
  try {
    found = await landed(events, stream, expected, appended);
  } catch {
    return refused(outcomeUnknown(error));
  }
  if (found) return { kind: 'landed', result: found };
  return refused(error instanceof AppendOutcomeUnknownError ? outcomeUnknown(error) : changeNotSaved(error));
}

/** Whether an append that reported a failure is in the log after all, and where. */
async function landed(events: EventStore, stream: string, expected: ExpectedRevision, appended: readonly EventToAppend[]): Promise<AppendResult | null> {
  const first = typeof expected === 'number' ? expected + 1 : 0;
  const found = await events.readStream(stream, { fromRevision: first, maxCount: appended.length });
  if (found.length < appended.length || found.some((event, i) => event.id !== appended[i].id)) return null;
  const last = found[found.length - 1];
  return { nextExpectedRevision: last.revision, position: last.position };
}
