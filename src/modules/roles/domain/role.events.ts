import { DomainEvent } from '../../../shared/domain/event';
import { RoleScope } from './permissions';

/** A role's identity beyond its name: a re-created role of the same name is another role. */
export type RoleId = string;

export type RoleCreated = DomainEvent<'RoleCreated', { name: string; scope: RoleScope; permissions: string[]; role_id: RoleId }>;
/** Assignments of the role end with it (they name its `role_id`, which no longer exists). */
export type RoleDeleted = DomainEvent<'RoleDeleted', { name: string; scope: RoleScope; role_id: RoleId }>;
export type RolePermissionsChanged = DomainEvent<
  'RolePermissionsChanged',
  { name: string; scope: RoleScope; added: string[]; removed: string[]; permissions: string[] }
>;
/**
 * The built-in roles as new, every other role and every assignment gone. No command writes it:
 * it is kept so that logs holding it fold as they were written.
 */
export type BuiltInRolesRestored = DomainEvent<'BuiltInRolesRestored', { epoch: string }>;

export type RoleEvent = RoleCreated | RoleDeleted | RolePermissionsChanged | BuiltInRolesRestored;

export type UserRoleAssigned = DomainEvent<
  'UserRoleAssigned',
  /** `user_created_at`: the user's incarnation; a user deleted and created again does not inherit it. */
  { user_id: string; role_name: string; role_id: RoleId; room_id?: string; user_created_at?: string }
>;
export type UserRoleRemoved = DomainEvent<'UserRoleRemoved', { user_id: string; role_name: string; room_id?: string }>;

export type UserRoleEvent = UserRoleAssigned | UserRoleRemoved;
