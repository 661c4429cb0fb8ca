import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { toErrorResponse } from '../../shared/http/error.filter';
import { EventChannel } from '../../shared/subscriptions/event-channel';
import { RequestActor } from '../instances/authentication/access-token';
import { RequestPermissions } from '../instances/authentication/request-permissions';
import { SubscriptionContext } from '../streaming/subscription-routes';
import { RolePermissions } from './role-permissions';
import { routePermission } from './route-permissions';

/**
 * The one permission check of HTTP calls: once the token guard has named the caller, the
 * route's entry in ROUTE_PERMISSIONS says what it needs (global roles, plus the room's when
 * the route names one). The token guard runs it on every authenticated route.
 */
@Injectable()
export class RoutePermissionCheck implements RequestPermissions {
  constructor(private readonly permissions: RolePermissions) {}

  async check(request: FastifyRequest, actor: RequestActor): Promise<void> {
    if (actor.su) return;
    const rule = routePermission(request.method, request.routeOptions?.url);
    if (!rule) return;
    const roomId = rule.roomParam ? (request.params as Record<string, string>)[rule.roomParam] : undefined;
    await this.permissions.require(actor, rule.permission, roomId);
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
