import type { IdempotencyRecord } from '../../domain/idempotency-record';

export type { IdempotencyRecord };

/**
 * The records of the requests in flight in this process, by request id. The write path stamps
 * the events of a command acting in such a request (its actor names the request, see
 * `actingInRequest`) with the record, so no command needs to pass it along.
 */
const guards = new Map<string, { readonly record: IdempotencyRecord; stamped: boolean }>();

/** Marks the request `requestId` as guarded by `record`; false (nothing marked) when another request in flight has that id. */
export function guardRequest(requestId: string, record: IdempotencyRecord): boolean {
  if (guards.has(requestId)) return false;
  guards.set(requestId, { record, stamped: false });
  return true;
}

/** The record to stamp on the events a command of request `requestId` appends, if it is guarded. */
export function guardOf(requestId: string | undefined): IdempotencyRecord | undefined {
  if (requestId === undefined) return undefined;
  const guard = guards.get(requestId);
  if (!guard) return undefined;
  guard.stamped = true;
  return guard.record;
}

/** Ends the guard of a request; whether any of its commands was stamped with the record (it may have decided nothing). */
export function releaseRequest(requestId: string): boolean {
  const guard = guards.get(requestId);
  guards.delete(requestId);
  return guard?.stamped ?? false;
}
