import { hash } from 'node:crypto';
import { badRequest, conflict, DomainError, unprocessable } from '../../shared/domain/errors';

/**
 * The wire contract of `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header: a
 * string the client makes, e.g. a UUID, the same on every retry of one logical write).
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
/** 1 to 255 visible ASCII characters: safe in logs and headers, and short enough to hash often. */
const ACCEPTED_KEY = /^[\x21-\x7e]{1,255}$/;

/** The methods that change something: only they take a key (a GET is safe to repeat as it is). */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The key a request sent, or undefined when it sent none; 400 when it is not one. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !ACCEPTED_KEY.test(header)) {
    throw badRequest('invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 255 visible ASCII characters (e.g. a UUID), sent once');
  }
  return header;
}

/**
 * SHA-256 of the parts, each followed by a NUL. One-shot `hash` (one call into OpenSSL) costs a
 * fraction of `createHash` with its updates, and these run for every keyed request.
 */
const sha256 = (...parts: string[]): string => hash('sha256', parts.map((part) => `${part}\0`).join(''), 'base64url');

/** What a key is scoped to: one instance, one token subject, one route (a template: `POST …/rooms/:roomId/messages`). */
export interface KeyScope {
  readonly instanceId: string;
  readonly subject: string;
  readonly route: string;
}

/** A key's id in the log and the read models: its scope and value hashed (a client's key is kept nowhere as sent). */
export const scopedKeyId = (scope: KeyScope, key: string): string => sha256('key', scope.instanceId, scope.subject, scope.route, key);

/** The request a key guards: method, path with its query, and body (as JSON). Another request with the same key is refused. */
export const requestFingerprint = (method: string, url: string, body: unknown): string =>
  sha256('request', method, url, body === undefined ? '' : JSON.stringify(body));

/** How long a client waits before retrying a request whose first attempt is still running. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

export const keyReused = () =>
  unprocessable('idempotency_key_reused', 'This Idempotency-Key was used for another request (method, path or body); a new request needs a new key. Nothing was done');

export const keyInFlight = () =>
  conflict('idempotency_key_in_flight', `A request with this Idempotency-Key is still being handled; retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} s to get its answer. Nothing was done`);

/**
 * The change the key guards was made, but the server stopped before it stored the answer, and the
 * change does not tell it (a send's id does; see derivedAnswerOf): reading it back tells the result.
 */
export const answerLost = () =>
  new DomainError(
    'conflict',
    'idempotency_key_answer_lost',
    'The change this Idempotency-Key guards was made, but the server stopped before it could store its answer; do not send it again, read the result back',
  );

/** The change the key guards was made and answered, but what it answered (a user's name, a room's) has been deleted since: it is not answered again. */
export const answerDeleted = () =>
  new DomainError(
    'conflict',
    'idempotency_key_answer_lost',
    'The change this Idempotency-Key guards was made, but what it answered has since been deleted, so it cannot be answered again; do not send it again',
  );
