import { CHATKIT_ROUTE } from '../../shared/http/chatkit-route';
import { CURSORS_ROUTE } from '../cursors/cursors-route';
import { PRESENCE_ROUTE } from '../presence/presence-route';
import { PermissionName } from './domain/permissions';

export interface RoutePermission {
  /** HTTP method, or SUBSCRIBE for subscriptions (HTTP SUBSCRIBE and /ws alike). */
  readonly method: string;
  /** The route as registered, `:param` segments included. */
  readonly route: string;
  readonly permission: PermissionName;
  /** The path parameter naming the room the call concerns: its room roles count too. */
  readonly roomParam?: string;
}

const chat = (method: string, path: string, permission: PermissionName, roomParam?: string): RoutePermission => ({
  method,
  route: `/${CHATKIT_ROUTE}/${path}`,
  permission,
  roomParam,
});
const cursors = (method: string, path: string, permission: PermissionName, roomParam?: string): RoutePermission => ({
  method,
  route: `/${CURSORS_ROUTE}/${path}`,
  permission,
  roomParam,
});
const FILES = '/services/chatkit_files/v1/:instanceId';

/**
 * The permission each call needs from a non-su token, in one place: the permission hook
 * (HTTP) and the subscription registry (SUBSCRIBE and /ws) look calls up here, so handlers
 * need not know about roles. Calls not listed need su (or act only for the token's own user).
 */
export const ROUTE_PERMISSIONS: readonly RoutePermission[] = [
  chat('GET', 'users', 'user:get'),
  chat('GET', 'users_by_ids', 'user:get'),
  chat('GET', 'users/:userId', 'user:get'),
  chat('PUT', 'users/:userId', 'user:update'),
  chat('GET', 'users/:userId/rooms', 'user:rooms:get'),
  chat('POST', 'users/:userId/rooms/:roomId/join', 'room:join', 'roomId'),
  chat('POST', 'users/:userId/rooms/:roomId/leave', 'room:leave', 'roomId'),
  chat('POST', 'rooms', 'room:create'),
  chat('GET', 'rooms', 'room:get'),
  chat('GET', 'rooms/:roomId', 'room:get', 'roomId'),
  chat('PUT', 'rooms/:roomId', 'room:update', 'roomId'),
  chat('DELETE', 'rooms/:roomId', 'room:delete', 'roomId'),
  chat('PUT', 'rooms/:roomId/users/add', 'room:members:add', 'roomId'),
  chat('PUT', 'rooms/:roomId/users/remove', 'room:members:remove', 'roomId'),
  chat('POST', 'rooms/:roomId/typing_indicators', 'room:typing_indicator:create', 'roomId'),
  chat('GET', 'rooms/:roomId/messages', 'room:messages:get', 'roomId'),
  chat('GET', 'rooms/:roomId/messages/:messageId', 'room:messages:get', 'roomId'),
  chat('POST', 'rooms/:roomId/messages', 'message:create', 'roomId'),
  chat('PUT', 'rooms/:roomId/messages/:messageId', 'message:create', 'roomId'),
  chat('POST', 'rooms/:roomId/attachments', 'file:create', 'roomId'),
  chat('GET', 'rooms/:roomId/attachments/:attachmentId', 'file:get', 'roomId'),
  chat('SUBSCRIBE', 'users', 'user:get'),
  chat('SUBSCRIBE', 'rooms/:roomId', 'room:messages:get', 'roomId'),
  chat('SUBSCRIBE', 'rooms/:roomId/memberships', 'room:get', 'roomId'),
  cursors('GET', 'cursors/0/users/:userId', 'cursors:read:get'),
  cursors('GET', 'cursors/0/rooms/:roomId', 'cursors:read:get', 'roomId'),
  cursors('GET', 'cursors/0/rooms/:roomId/users/:userId', 'cursors:read:get', 'roomId'),
  cursors('PUT', 'cursors/0/rooms/:roomId/users/:userId', 'cursors:read:set', 'roomId'),
  cursors('SUBSCRIBE', 'cursors/0/users/:userId', 'cursors:read:get'),
  cursors('SUBSCRIBE', 'cursors/0/rooms/:roomId', 'cursors:read:get', 'roomId'),
  { method: 'SUBSCRIBE', route: `${PRESENCE_ROUTE}/users/:userId/register`, permission: 'presence:subscribe' },
  { method: 'SUBSCRIBE', route: `${PRESENCE_ROUTE}/users/:userId`, permission: 'presence:subscribe' },
  { method: 'POST', route: `${FILES}/rooms/:roomId/users/:userId/files/:fileName`, permission: 'file:create', roomParam: 'roomId' },
  { method: 'GET', route: `${FILES}/rooms/:roomId/files/:fileName`, permission: 'file:get', roomParam: 'roomId' },
  { method: 'DELETE', route: `${FILES}/rooms/:roomId/files/:fileName`, permission: 'file:create', roomParam: 'roomId' },
  { method: 'DELETE', route: `${FILES}/users/:userId`, permission: 'file:create' },
];

const byRoute = new Map(ROUTE_PERMISSIONS.map((r) => [`${r.method} ${r.route}`, r]));

/** The rule for a call, by its method and its route pattern as the router registered it. */
export const routePermission = (method: string, route: string | undefined): RoutePermission | undefined =>
  route === undefined ? undefined : byRoute.get(`${method} ${route.startsWith('/') ? route : `/${route}`}`);
