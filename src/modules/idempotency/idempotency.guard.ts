import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PresetAnswer } from '../../shared/http/preset-answer';
import type { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { idempotencyKeyOf, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, WRITE_METHODS } from './idempotency-key';
import { IdempotentRequests } from './idempotent-requests';
import { headersForKeyError, runningUnderKey, scopeOf, subjectOf } from './keyed-requests';

/**
 * `Idempotency-Key` on a write route the Nest router serves (put on each by `guardWriteRoutes`):
 * after the access guard (the subject is verified), before the handler. A first attempt runs,
 * its answer stored as it is sent (`storeKeyedAnswers`); a retry is answered with the stored
 * answer (`PresetAnswer`) and the handler never runs. A guard rather than an interceptor: with
 * any interceptor on a route Nest runs each request through rxjs and `AsyncResource.bind`, a
 * cost every write would pay, keyed or not. A request without the header is not touched, so the
 * original SDKs see nothing of it.
 */
@Injectable()
export class IdempotencyGuard implements CanActivate {
  constructor(private readonly requests: IdempotentRequests) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    if (!WRITE_METHODS.has(request.method)) return true;
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return true;
    const reply = http.getResponse<FastifyReply>();
    let outcome;
    try {
      outcome = await this.requests.begin({ scope: scopeOf(request, subjectOf(request)), key, method: request.method, url: request.url, body: request.body, requestId: request.id });
    } catch (error) {
      headersForKeyError(error, reply);
      throw error;
    }
    if (outcome.kind === 'replay') throw new PresetAnswer(outcome.answer.status, outcome.answer.body ?? undefined, { [IDEMPOTENT_REPLAYED_HEADER]: 'true' });
    runningUnderKey(request, outcome);
    return true;
  }
}
