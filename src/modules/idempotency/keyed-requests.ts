import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import type { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { DomainError } from '../../shared/domain/errors';
import { IN_FLIGHT_RETRY_AFTER_SECONDS, KeyScope } from './idempotency-key';
import type { KeyedOutcome } from './idempotent-requests';

/**
 * Who a key belongs to: the verified token's subject (its user, or its key for a token without
 * one), as the access guard put it on the request. Routes that check their own credential in the
 * handler (Feeds, the admin API) have none yet: the credential itself, hashed, stands for it, so
 * only its holder ever gets a replayed answer.
 */
export function subjectOf(request: AuthenticatedRequest): string {
  const actor = request.actor;
  if (actor) return actor.userId !== undefined ? `user:${actor.userId}` : `key:${actor.keyId}`;
  const credential = request.headers.authorization ?? '';
  return `credential:${createHash('sha256').update(credential).digest('base64url')}`;
}

/** The scope of a request's key: its instance, its subject, and the route it took (the template, not the path). */
export const scopeOf = (request: AuthenticatedRequest, subject: string): KeyScope => ({
  instanceId: (request.params as { instanceId?: string } | undefined)?.instanceId ?? '',
  subject,
  route: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`,
});

/** Marks an error of the key contract for the answer: 409 in flight carries Retry-After. */
export function headersForKeyError(error: unknown, reply: FastifyReply): void {
  if (error instanceof DomainError && error.reason === 'idempotency_key_in_flight') void reply.header('retry-after', String(IN_FLIGHT_RETRY_AFTER_SECONDS));
}

type Running = Extract<KeyedOutcome, { kind: 'run' }>;

/** The keyed requests running, each until its answer is stored (or it ends without one). */
const running = new WeakMap<FastifyRequest, Running>();

/** Marks a request as running under its key: its answer is stored when it is sent (`storeKeyedAnswers`). */
export function runningUnderKey(request: FastifyRequest, outcome: Running): void {
  running.set(request, outcome);
}

function settle(request: FastifyRequest): Running | undefined {
  const outcome = running.get(request);
  running.delete(request);
  return outcome;
}

/**
 * Stores the answer of every keyed request as it is sent (a 2xx; any other answer frees the key),
 * and frees the key of one that ended without an answer (the client went away). On the root
 * Fastify instance, before any route: Nest's write routes (`IdempotencyGuard`) and the Fastify
 * scopes of their own (`idempotentFastifyRoutes`) mark their requests with `runningUnderKey`.
 * The answer is stored before it goes out, so a retry that follows it finds it.
 */
export function storeKeyedAnswers(fastify: FastifyInstance): void {
  // Callback hooks, not async ones: every request passes here, and only keyed writes have work.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const outcome = settle(request);
    if (!outcome) return done(null, payload);
    if (reply.statusCode < 200 || reply.statusCode >= 300) {
      outcome.abandon();
      return done(null, payload);
    }
    const body = typeof payload === 'string' && payload !== '' ? (JSON.parse(payload) as unknown) : null;
    outcome.finish({ status: reply.statusCode, body }).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    settle(request)?.abandon();
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    settle(request)?.abandon();
    done();
  });
}
