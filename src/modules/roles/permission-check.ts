import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { toErrorResponse } from '../../shared/http/error.filter';
import { EventChannel } from '../../shared/subscriptions/event-channel';
import { RequestActor } from '../instances/authentication/access-token';
import { SubscriptionContext } from '../streaming/subscription-routes';
import { RolePermissions } from './role-permissions';
import { routePermission } from './route-permissions';

type CheckedRequest = FastifyRequest & { actor?: RequestActor; user?: unknown };

const isActor = (value: unknown): value is RequestActor =>
  typeof value === 'object' && value !== null && typeof (value as RequestActor).instanceId === 'string' && 'su' in value;

/**
 * The one permission check of HTTP calls: after the token guard has named the caller, the
 * route's entry in ROUTE_PERMISSIONS says what it needs (global roles, plus the room's when
 * the route names one). Registered for every route of the app (APP_INTERCEPTOR).
 */
@Injectable()
export class PermissionInterceptor implements NestInterceptor {
  constructor(private readonly permissions: RolePermissions) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() === 'http') {
      const request = context.switchToHttp().getRequest<CheckedRequest>();
      const rule = routePermission(request.method, request.routeOptions?.url);
      const actor = isActor(request.actor) ? request.actor : isActor(request.user) ? request.user : undefined;
      if (rule && actor) {
        const roomId = rule.roomParam ? (request.params as Record<string, string>)[rule.roomParam] : undefined;
        await this.permissions.require(actor, rule.permission, roomId);
      }
    }
    return next.handle();
  }
}

/**
 * The same check for subscriptions, before they open; an open one is checked again on every
 * role change concerning its user and ends with the 403 when the grant is gone.
 */
export const subscriptionPermissionCheck =
  (permissions: RolePermissions) =>
  async (route: string, { actor, params }: SubscriptionContext, channel: EventChannel): Promise<void> => {
    const rule = routePermission('SUBSCRIBE', route);
    if (!rule || actor.su) return;
    const roomId = rule.roomParam ? params[rule.roomParam] : undefined;
    await permissions.require(actor, rule.permission, roomId);
    const recheck = () => {
      permissions.require(actor, rule.permission, roomId).then(
        () => undefined,
        (error) => {
          const { status, body } = toErrorResponse(error, route.replace(':instanceId', actor.instanceId));
          channel.end(status, body);
        },
      );
    };
    channel.onClose(permissions.watch(actor.instanceId, actor.userId ?? '', recheck));
  };
