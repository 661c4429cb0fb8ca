import {
  ANY,
  AccessDeniedError,
  AppendExpectedRevision,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NO_STREAM,
  NotLeaderError,
  STREAM_EXISTS,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
} from '@eventstore/db-client';
import { conflict } from '../../../shared/domain/errors';
import { AppendOutcomeUnknownError, AppendTooLargeError, EventStoreUnavailableError, ExpectedRevision } from '../../../shared/ports/event-store.port';
import { EsdbTimeoutError } from '../../shared/esdb-client';

/** A hard-deleted (tombstoned) stream can never be written again: a conflict, and nothing was stored. */
const streamDeleted = () =>
  conflict(
    'stream_deleted',
    'The resource was deleted permanently from the event log; nothing was written, and its id cannot be used again',
  );

/**
 * What a failed append (other than a wrong expected revision) means for its caller: refused,
 * with nothing written (a conflict, too large, a server that never got it or turned it away),
 * or unknown. A timeout (the server's own commit timeout, the call's deadline, this adapter's),
 * a dropped or cancelled call: the server may have it and write it later, so not finding it
 * yet proves nothing, and a retry with new event ids would write the change twice.
 */
export function appendFailure(error: unknown, streamName: string, bytes: number): Error {
  if (error instanceof StreamDeletedError) return streamDeleted();
  if (error instanceof MaxAppendSizeExceededError) return new AppendTooLargeError(streamName, error.maxAppendSize, bytes, { cause: error });
  if (error instanceof UnavailableError && NEVER_SENT.test(error.message)) {
    return new EventStoreUnavailableError('EventStoreDB is unreachable', { cause: error });
  }
  if (error instanceof NotLeaderError) return new EventStoreUnavailableError('the EventStoreDB node is not the leader', { cause: error });
  if (error instanceof AccessDeniedError) return new EventStoreUnavailableError('EventStoreDB refused the credentials', { cause: error });
  const reason =
    error instanceof EsdbTimeoutError || error instanceof TimeoutError || error instanceof DeadlineExceededError
      ? 'EventStoreDB did not confirm the write in time'
      : 'the connection to EventStoreDB failed during the write';
  return new AppendOutcomeUnknownError(reason, { cause: error, foundMeansKept: true });
}

/**
 * gRPC's words for a call that never left this process (no connection, an unresolvable name, a
 * closed channel), and the server's for one it turned away unread while starting.
 */
const NEVER_SENT = /No connection established|Name resolution failed|Channel closed before call started|Server Is Not Ready/i;

/** The port's expected revision as the client's. */
export function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) throw new Error(`Invalid expected revision: ${expected}`);
      return BigInt(expected);
  }
}
