/**
 * Chatkit's permission names (wire study §5.1, plus `user:create`/`user:update` from the spec),
 * and Parley's own: `message:react` (adding and removing one's reactions), `message:pin`
 * (pinning and unpinning a room's messages), `report:create` (reporting a message or a user to
 * the instance's moderators: in the default role, since anyone who can be harassed must be able to
 * say so), `room:ban` (banning users from a room, listing its bans) and `room:freeze` (making a
 * room read only); the last two belong to moderators, not to the `default` role.
 * A role may hold only these; anything else is refused naming the list.
 */
export const PERMISSION_NAMES = [
  'message:create',
  'message:react',
  'message:pin',
  'report:create',
  'room:ban',
  'room:freeze',
  'room:join',
  'room:leave',
  'room:members:add',
  'room:members:remove',
  'room:get',
  'room:create',
  'room:update',
  'room:delete',
  'room:messages:get',
  'room:typing_indicator:create',
  'presence:subscribe',
  'user:get',
  'user:create',
  'user:update',
  'user:rooms:get',
  'file:get',
  'file:create',
  'cursors:read:get',
  'cursors:read:set',
] as const;

export type PermissionName = (typeof PERMISSION_NAMES)[number];

const KNOWN = new Set<string>(PERMISSION_NAMES);
export const isPermissionName = (name: unknown): name is PermissionName => typeof name === 'string' && KNOWN.has(name);

export const ROLE_SCOPES = ['global', 'room'] as const;
export type RoleScope = (typeof ROLE_SCOPES)[number];
export const isRoleScope = (scope: unknown): scope is RoleScope => scope === 'global' || scope === 'room';

export const DEFAULT_ROLE = 'default';
export const ADMIN_ROLE = 'admin';

/** Chatkit's `default` role: everything a member does, but not updating or deleting rooms. */
const DEFAULT_PERMISSIONS: readonly PermissionName[] = PERMISSION_NAMES.filter(
  (p) => p !== 'room:update' && p !== 'room:delete' && p !== 'user:create' && p !== 'room:ban' && p !== 'room:freeze',
);

/** The built-in global roles every instance starts with (and a wipe restores). */
export const BUILT_IN_ROLES: readonly { name: string; permissions: readonly PermissionName[] }[] = [
  { name: DEFAULT_ROLE, permissions: DEFAULT_PERMISSIONS },
  { name: ADMIN_ROLE, permissions: PERMISSION_NAMES },
];
