import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import type { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { headersForKeyError, runningUnderKey, scopeOf, subjectOf } from './keyed-requests';
import { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, WRITE_METHODS } from './idempotency-key';
import { IdempotentRequests, KeyedOutcome } from './idempotent-requests';

const STREAMED_BODY = { streamed: true };

/**
 * `Idempotency-Key` on the write routes a Fastify scope serves itself, outside the Nest router
 * (Beams' publish API, the files API's upload): the same `IdempotentRequests` as Nest's write
 * routes (`IdempotencyGuard`), through a hook; the answer is stored by `storeKeyedAnswers`. Such
 * routes check their credential in the handler or a route's own hook, after this one: the
 * credential itself (hashed) is the key's subject (`subjectOf`), so only its holder gets a
 * replayed answer.
 */
export function idempotentFastifyRoutes(scope: FastifyInstance, requests: IdempotentRequests): void {
  scope.addHook('preHandler', async (request, reply) => {
    if (!WRITE_METHODS.has(request.method)) return;
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return;
    const authenticated = request as AuthenticatedRequest;
    let outcome: KeyedOutcome;
    try {
      outcome = await requests.begin({
        scope: scopeOf(authenticated, subjectOf(authenticated)),
        key,
        method: request.method,
        url: request.url,
        // A body streamed to storage by the handler (an upload) is not read here: it is no part of the request's identity.
        body: request.body instanceof Readable ? STREAMED_BODY : request.body,
        requestId: request.id,
      });
    } catch (error) {
      headersForKeyError(error, reply);
      throw error;
    }
    if (outcome.kind === 'replay') {
      return reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true').status(outcome.answer.status).send(outcome.answer.body ?? undefined);
    }
    runningUnderKey(request, outcome);
  });
}
