import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccessTokenGuard, AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { OperatorTokenVerifier } from '../instances/authentication/operator-token';
import { AccessCheck, accessUndeclared, RouteParams } from './access-check';
import { AccessRule, isAccessRule, needsAccessToken } from './access-rules';
import { ACCESS_RULE } from './requires.decorator';
import { ShadowBannedRequest } from '../bans/shadow-banned.decorator';

/**
 * The guard of every controller route (bound globally by the roles module), in the manner of
 * nestjs's `roles.guard.ts` but closed by default: it reads the method's `@Requires(…)`, and a
 * method without one is refused (the start-up check names it before any request comes). A
 * rule that needs a token verifies it first (401 or the unknown instance's 404), then
 * `AccessCheck` decides (403); the operator rule verifies the deployment credential instead.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly token: AccessTokenGuard,
    private readonly check: AccessCheck,
    private readonly operators: OperatorTokenVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.get<AccessRule | undefined>(ACCESS_RULE, context.getHandler());
    if (!isAccessRule(rule)) throw accessUndeclared();
    if (rule.kind === 'operator') {
      const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
      request.operator = this.operators.verify(request.headers.authorization);
      return true;
    }
    if (!needsAccessToken(rule)) return true;
    await this.token.canActivate(context);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const restriction = await this.check.authorize(rule, request.actor!, request.params as RouteParams, { method: request.method, route: request.routeOptions.url ?? '' });
    if (restriction?.shadow) (request as ShadowBannedRequest).shadowBanned = true;
    return true;
  }
}
