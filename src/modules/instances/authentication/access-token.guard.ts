import { createParamDecorator, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { AuthGuard, AuthModuleOptions } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { forbidden } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { AccessTokenStrategy, authenticationError, RequestActor } from './access-token.strategy';
import { REQUEST_PERMISSIONS, RequestPermissions } from './request-permissions';
import { actingInRequest } from '../../../shared/observability/request-context';

type AuthenticatedRequest = FastifyRequest & { actor?: RequestActor };

/**
 * Requires a valid access token for the instance named in the path (`:instanceId`), through
 * @nestjs/passport and this application's `AccessTokenStrategy` (named in AuthModuleOptions).
 * The verified caller lands on `request.actor`; then the route's permission is checked (a
 * guard, not an interceptor: no observable and no async resource per request).
 */
@Injectable()
export class AccessTokenGuard extends AuthGuard() {
  constructor(
    private readonly strategy: AccessTokenStrategy,
    @Optional() options?: AuthModuleOptions,
    @Optional() @Inject(REQUEST_PERMISSIONS) private readonly permissions?: RequestPermissions,
  ) {
    super(options);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    // A token the strategy verified before is answered from its cache, without passport's per-request machinery.
    const cached = await this.strategy.cached(request as never);
    if (cached) request.actor = cached;
    const allowed = cached ? true : ((await super.canActivate(context)) as boolean);
    if (allowed && this.permissions) {
      const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
      await this.permissions.check(request, request.actor!);
    }
    return allowed;
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

export const requireSu = (actor: RequestActor): void => {
  if (!actor.su) throw forbidden('su_required', 'This call needs a token with the "su" claim');
};

/** A user may act for themselves; acting for someone else needs su. */
export const requireSelfOrSu = (actor: RequestActor, userId: string): void => {
  if (!actor.su && actor.userId !== userId) {
    throw forbidden('not_allowed', `This token may not act for the user "${userId}"`);
  }
};

/** The audit trail records which key and which user caused each event, and in which request (metadata.request_id). */
export const auditActor = (actor: RequestActor): Actor => {
  const audit: Actor = {
    key_id: actor.keyId,
    ...(actor.userId !== undefined && { user_id: actor.userId }),
    ...(actor.su && { su: true }),
  };
  return actingInRequest(audit, actor.requestId);
};
