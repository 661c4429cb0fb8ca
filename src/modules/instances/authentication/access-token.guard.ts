import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { forbidden } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { AccessTokenVerifier, RequestActor } from './access-token';

type AuthenticatedRequest = FastifyRequest & { actor?: RequestActor };

/** Requires a valid access token for the instance named in the path (`:instanceId`). */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(private readonly verifier: AccessTokenVerifier) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const instanceId = (request.params as Record<string, string>).instanceId;
    request.actor = await this.verifier.verify(request.headers.authorization, instanceId);
    return true;
  }
}

/** The verified caller of the request. */
export const CurrentActor = createParamDecorator(
  (_: unknown, context: ExecutionContext): RequestActor => context.switchToHttp().getRequest<AuthenticatedRequest>().actor!,
);

export const requireSu = (actor: RequestActor): void => {
  if (!actor.su) throw forbidden('su_required', 'This call needs a token with the "su" claim');
};

/** A user may act for themselves; acting for someone else needs su. */
export const requireSelfOrSu = (actor: RequestActor, userId: string): void => {
  if (!actor.su && actor.userId !== userId) {
    throw forbidden('not_allowed', `This token may not act for the user "${userId}"`);
  }
};

/** The audit trail records which key and which user caused each event. */
export const auditActor = (actor: RequestActor): Actor => ({
  key_id: actor.keyId,
  ...(actor.userId !== undefined && { user_id: actor.userId }),
  ...(actor.su && { su: true }),
});
