import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { headersForKeyError, scopeOf, subjectOf } from './idempotency.interceptor';
import { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, WRITE_METHODS } from './idempotency-key';
import { IdempotentRequests, KeyedOutcome } from './idempotent-requests';

type Running = Extract<KeyedOutcome, { kind: 'run' }>;

const STREAMED_BODY = { streamed: true };

/**
 * `Idempotency-Key` on the write routes a Fastify scope serves itself, outside the Nest router
 * (Beams' publish API, the files API's upload): the same `IdempotentRequests` as the Nest interceptor, through hooks. Such
 * routes check their credential in the handler or a route's own hook, after these hooks: the
 * credential itself (hashed) is the key's subject (`subjectOf`), so only its holder gets a replayed
 * answer.
 */
export function idempotentFastifyRoutes(scope: FastifyInstance, requests: IdempotentRequests): void {
  const running = new WeakMap<FastifyRequest, Running>();
  const settle = (request: FastifyRequest): Running | undefined => {
    const outcome = running.get(request);
    running.delete(request);
    return outcome;
  };

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
    running.set(request, outcome);
  });

  scope.addHook('onSend', async (request, reply, payload) => {
    const outcome = settle(request);
    if (!outcome) return payload;
    if (reply.statusCode >= 200 && reply.statusCode < 300) {
      await outcome.finish({ status: reply.statusCode, body: typeof payload === 'string' && payload !== '' ? (JSON.parse(payload) as unknown) : null });
    } else {
      outcome.abandon();
    }
    return payload;
  });

  // A request that ended without an answer sent (the client went away).
  scope.addHook('onResponse', async (request) => settle(request)?.abandon());
  scope.addHook('onRequestAbort', async (request) => settle(request)?.abandon());
}
