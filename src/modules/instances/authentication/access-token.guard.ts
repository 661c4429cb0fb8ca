import { createParamDecorator, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { AuthGuard, AuthModuleOptions } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { forbidden } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { AccessTokenStrategy, authenticationError, RequestActor } from './access-token.strategy';
import { actingInRequest } from '../../../shared/observability/request-context';
import { Operator, operatorActor } from './operator-token';

export type AuthenticatedRequest = FastifyRequest & { actor?: RequestActor; operator?: Operator };

/**
 * Verifies the access token for the instance named in the path (`:instanceId`), through
 * @nestjs/passport and this application's `AccessTokenStrategy` (named in AuthModuleOptions),
 * and puts the verified caller on `request.actor`. The roles module's `AccessGuard` runs it
 * for every route whose declaration needs a token, then checks the declaration.
 */
@Injectable()
export class AccessTokenGuard extends AuthGuard() {
  constructor(
    private readonly strategy: AccessTokenStrategy,
    @Optional() options?: AuthModuleOptions,
  ) {
    super(options);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    // A token the strategy verified before is answered from its cache, without passport's per-request machinery.
    const cached = await this.strategy.cached(request as never);
    if (cached) request.actor = cached;
    return cached ? true : ((await super.canActivate(context)) as boolean);
  }

  override handleRequest<T = RequestActor>(error: unknown, actor: T | false, info: unknown): T {
    if (!actor) throw authenticationError(error, info);
    return actor;
  }
}

/** The verified caller of the request, with the request's id (the verified actor itself is shared by every request with that token). */
export const CurrentActor = createParamDecorator((_: unknown, context: ExecutionContext): RequestActor => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  return { ...request.actor!, requestId: request.id };
});

/** What the audit records of the operator a deployment-credential route verified (`{key_id: "console", console_user}`), in this request. */
export const CurrentOperatorActor = createParamDecorator((_: unknown, context: ExecutionContext): Actor => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  return operatorActor(request.operator!, request.id);
});

export const requireSu = (actor: RequestActor): void => {
  if (!actor.su) throw forbidden('su_required', 'This call needs a token with the "su" claim');
};

/** A user may act for themselves; acting for someone else needs su. */
export const requireSelfOrSu = (actor: RequestActor, userId: string): void => {
  if (!actor.su && actor.userId !== userId) {
    throw forbidden('not_allowed', `This token may not act for the user "${userId}"`);
  }
};

/** The audit trail records which key, which user and which console user caused each event, and in which request (metadata.request_id). */
export const auditActor = (actor: RequestActor): Actor => {
  const audit: Actor = {
    key_id: actor.keyId,
    ...(actor.userId !== undefined && { user_id: actor.userId }),
    ...(actor.su && { su: true }),
    ...(actor.consoleUser !== undefined && { console_user: actor.consoleUser }),
  };
  return actingInRequest(audit, actor.requestId);
};
