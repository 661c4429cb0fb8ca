import type { IdempotencyRecord } from '../../domain/idempotency-record';
import type { LogPosition } from '../../domain/event';
import type { EventToAppend } from '../../ports/event-store.port';

export type { IdempotencyRecord };

/** What a guarded request appended: its events as the command decided them (before the store sealed anything), by stream. */
export interface GuardedAppend {
  readonly stream: string;
  readonly events: readonly { readonly type: string; readonly data: unknown }[];
  /** The log position of the append's last event: the key record is in the log up to there. */
  readonly position: LogPosition;
}

/** What a guarded request did, as its answer's sealing needs it. */
export interface GuardedRequest {
  /** Its durable appends (empty when none is known to be durable). */
  readonly appended: readonly GuardedAppend[];
  /** Data keys of content its answer shows besides what it appended (`answerShows`). */
  readonly shows: readonly string[];
}

interface Guard {
  readonly record: IdempotencyRecord;
  stamped: boolean;
  readonly appended: GuardedAppend[];
  readonly shows: string[];
}

/**
 * The records of the requests in flight in this process, by request id. The write path stamps
 * the events of a command acting in such a request (its actor names the request, see
 * `actingInRequest`) with the record, so no command needs to pass it along, and tells what they
 * appended (`noteAppended`): a stored answer is sealed under the data keys of those events.
 */
const guards = new Map<string, Guard>();

/** Marks the request `requestId` as guarded by `record`; false (nothing marked) when another request in flight has that id. */
export function guardRequest(requestId: string, record: IdempotencyRecord): boolean {
  if (guards.has(requestId)) return false;
  guards.set(requestId, { record, stamped: false, appended: [], shows: [] });
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

/** Tells the guards of the requests whose stamped events are in a durable append what they appended. */
export function noteAppended(stream: string, events: readonly EventToAppend[], position: LogPosition): void {
  if (guards.size === 0) return;
  let last: { guard: Guard; events: GuardedAppend['events'][number][] } | undefined;
  for (const event of events) {
    const requestId = event.metadata?.request_id;
    const guard = typeof requestId === 'string' ? guards.get(requestId) : undefined;
    // Only events stamped with this guard's own record (another request may have had the id before).
    if (!guard || event.metadata?.idempotency !== guard.record) continue;
    if (last?.guard !== guard) {
      last = { guard, events: [] };
      guard.appended.push({ stream, events: last.events, position });
    }
    last.events.push({ type: event.type, data: event.data });
  }
}

/**
 * Says that the answer of the request `requestId` (if it is guarded) shows content sealed under
 * the data keys `keyIds` that its own events do not name (a join answers the room, named when the
 * room was created): its stored answer is sealed under them too, so it goes with that content.
 */
export function answerShows(requestId: string | undefined, keyIds: readonly string[]): void {
  const guard = requestId === undefined ? undefined : guards.get(requestId);
  guard?.shows.push(...keyIds);
}

/** Ends the guard of a request: null when none of its commands was stamped with the record (it decided nothing), else what it did. */
export function releaseRequest(requestId: string): GuardedRequest | null {
  const guard = guards.get(requestId);
  guards.delete(requestId);
  return guard?.stamped ? { appended: guard.appended, shows: guard.shows } : null;
}
