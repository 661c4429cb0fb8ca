import { Decider } from '../../../shared/domain/decider';
import { conflict, notFound, unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { BUILT_IN_ROLES, isPermissionName, PERMISSION_NAMES, RoleScope } from './permissions';
import { RoleEvent, RoleId } from './role.events';

/** One stream per instance holds its role catalogue: small, rarely written. */
export const rolesStream = (instanceId: string) => streamName('roles', instanceId, 'catalogue');

export interface Role {
  readonly name: string;
  readonly scope: RoleScope;
  readonly permissions: readonly string[];
  readonly role_id: RoleId;
}

export interface RolesState {
  /** By `roleKey(scope, name)`. */
  readonly roles: ReadonlyMap<string, Role>;
}

export const roleKey = (scope: RoleScope, name: string): string => `${scope}/${name}`;

export type RolesCommand =
  | { type: 'CreateRole'; name: string; scope: RoleScope; permissions: string[]; role_id: RoleId }
  | { type: 'DeleteRole'; name: string; scope: RoleScope }
  | { type: 'ChangeRolePermissions'; name: string; scope: RoleScope; add: string[]; remove: string[] };

export const roleNotFound = (name: string, scope: string) =>
  notFound('role_not_found', `There is no ${scope} role named "${name}"`);

/** 422 naming what is allowed. */
export const requireKnownPermissions = (permissions: readonly unknown[]): void => {
  const unknown = permissions.filter((p) => !isPermissionName(p));
  if (unknown.length > 0) {
    throw unprocessable(
      'invalid_permission',
      `Unknown permission name(s) ${unknown.map((p) => JSON.stringify(p)).join(', ')}; allowed: ${PERMISSION_NAMES.join(', ')}`,
    );
  }
};

const builtIns = (epoch: string | null): Map<string, Role> =>
  new Map(
    BUILT_IN_ROLES.map((r) => [
      roleKey('global', r.name),
      { name: r.name, scope: 'global' as const, permissions: [...r.permissions], role_id: epoch ? `builtin:${epoch}` : 'builtin' },
    ]),
  );

const withRole = (state: RolesState, key: string, role: Role | null): RolesState => {
  const roles = new Map(state.roles);
  if (role) roles.set(key, role);
  else roles.delete(key);
  return { roles };
};

export const rolesDecider: Decider<RolesState, RolesCommand, RoleEvent> = {
  /** A new instance has the built-in roles. */
  initialState: () => ({ roles: builtIns(null) }),
  /** A wiped one has none: Chatkit's wipe left no role, and its clients create `default` and `admin` again. */
  wipedState: () => ({ roles: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'RoleCreated': {
        const { name, scope, permissions, role_id } = event.data;
        return withRole(state, roleKey(scope, name), { name, scope, permissions, role_id });
      }
      case 'RoleDeleted':
        return withRole(state, roleKey(event.data.scope, event.data.name), null);
      case 'RolePermissionsChanged': {
        const key = roleKey(event.data.scope, event.data.name);
        const role = state.roles.get(key);
        return role ? withRole(state, key, { ...role, permissions: event.data.permissions }) : state;
      }
      // Events are permanent: where a log holds one, the built-in roles were restored at that point.
      case 'BuiltInRolesRestored':
        return { roles: builtIns(event.data.epoch) };
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateRole': {
        requireKnownPermissions(command.permissions);
        if (state.roles.has(roleKey(command.scope, command.name))) {
          throw conflict('role_already_exists', `A ${command.scope} role named "${command.name}" already exists`);
        }
        const permissions = [...new Set(command.permissions)];
        return [{ type: 'RoleCreated', data: { name: command.name, scope: command.scope, permissions, role_id: command.role_id } }];
      }
      case 'DeleteRole': {
        const role = state.roles.get(roleKey(command.scope, command.name));
        if (!role) throw roleNotFound(command.name, command.scope);
        return [{ type: 'RoleDeleted', data: { name: role.name, scope: role.scope, role_id: role.role_id } }];
      }
      case 'ChangeRolePermissions': {
        requireKnownPermissions([...command.add, ...command.remove]);
        const role = state.roles.get(roleKey(command.scope, command.name));
        if (!role) throw roleNotFound(command.name, command.scope);
        const next = new Set(role.permissions);
        const added = [...new Set(command.add)].filter((p) => !next.has(p));
        for (const p of added) next.add(p);
        const removed = [...new Set(command.remove)].filter((p) => next.has(p) && !command.add.includes(p));
        for (const p of removed) next.delete(p);
        if (added.length === 0 && removed.length === 0) return [];
        return [
          {
            type: 'RolePermissionsChanged',
            data: { name: role.name, scope: role.scope, added, removed, permissions: [...next] },
          },
        ];
      }
    }
  },
};
