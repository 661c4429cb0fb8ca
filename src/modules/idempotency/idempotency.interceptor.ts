import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import { defer, finalize, from, mergeMap, Observable, of } from 'rxjs';
import type { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { DomainError } from '../../shared/domain/errors';
import { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, IN_FLIGHT_RETRY_AFTER_SECONDS, KeyScope, WRITE_METHODS } from './idempotency-key';
import { IdempotentRequests } from './idempotent-requests';

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

/**
 * `Idempotency-Key` on every write route the Nest router serves (chat, roles, cursors, files,
 * scheduler, Feeds, admin): after the guards (the subject is verified), before the handler. A
 * request without the header is not touched, so the original SDKs see nothing of it.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly requests: IdempotentRequests) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    if (!WRITE_METHODS.has(request.method)) return next.handle();
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return next.handle();
    // Nest set the route's status before the interceptors run; a handler may set another (201 or 200).
    const reply = http.getResponse<FastifyReply>();
    const begun = defer(() =>
      this.requests
        .begin({ scope: scopeOf(request, subjectOf(request)), key, method: request.method, url: request.url, body: request.body, requestId: request.id })
        .catch((error: unknown) => {
          headersForKeyError(error, reply);
          throw error;
        }),
    );
    return begun.pipe(
      mergeMap((outcome) => {
        if (outcome.kind === 'replay') {
          void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true').status(outcome.answer.status);
          return of(outcome.answer.body ?? undefined);
        }
        return next.handle().pipe(
          mergeMap((body: unknown) => from(outcome.finish({ status: reply.statusCode, body: body ?? null }).then(() => body))),
          // A failed handler (or a client gone before the answer): nothing stored, the key free again.
          finalize(() => outcome.abandon()),
        );
      }),
    );
  }
}
