import { Decider } from '../../../shared/domain/decider';
import { notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { DEFAULT_ROLE } from './permissions';
import { RoleId, UserRoleEvent } from './role.events';
import { Role, roleKey, RolesState } from './roles.decider';

/** A user's role assignments: one stream per user, so assigning costs the same however many users have roles. */
export const userRolesStream = (instanceId: string, userId: string) => streamName('userroles', instanceId, userId);

export interface Assignment {
  readonly role_name: string;
  readonly role_id: RoleId;
}

export interface UserRolesState {
  /** The user's one global role besides the implicit `default`. */
  readonly global: Assignment | null;
  readonly rooms: ReadonlyMap<string, Assignment>;
}

export type UserRolesCommand =
  | { type: 'AssignRole'; user_id: string; role: Role; room_id?: string }
  | { type: 'RemoveRole'; user_id: string; room_id?: string; live: boolean };

export const userRoleNotFound = (userId: string, roomId?: string) =>
  notFound(
    'user_role_not_found',
    roomId === undefined ? `The user "${userId}" has no global role besides default` : `The user "${userId}" has no role in the room "${roomId}"`,
  );

/**
 * The role an assignment names, if it still exists: a deleted role (or one deleted and
 * created again, or wiped) has another `role_id`, so its assignments lapse with it.
 */
export const liveRole = (catalogue: RolesState, assignment: Assignment | null | undefined, roomScoped: boolean): Role | null => {
  if (!assignment) return null;
  const role = catalogue.roles.get(roleKey(roomScoped ? 'room' : 'global', assignment.role_name));
  return role && role.role_id === assignment.role_id ? role : null;
};

export const userRolesDecider: Decider<UserRolesState, UserRolesCommand, UserRoleEvent> = {
  initialState: () => ({ global: null, rooms: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'UserRoleAssigned': {
        const assignment = { role_name: event.data.role_name, role_id: event.data.role_id };
        if (event.data.room_id === undefined) return { ...state, global: assignment };
        return { ...state, rooms: new Map(state.rooms).set(event.data.room_id, assignment) };
      }
      case 'UserRoleRemoved': {
        if (event.data.room_id === undefined) return { ...state, global: null };
        const rooms = new Map(state.rooms);
        rooms.delete(event.data.room_id);
        return { ...state, rooms };
      }
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'AssignRole': {
        const current = command.room_id === undefined ? state.global : state.rooms.get(command.room_id);
        if (current && current.role_id === command.role.role_id) return [];
        return [
          {
            type: 'UserRoleAssigned',
            data: {
              user_id: command.user_id,
              role_name: command.role.name,
              role_id: command.role.role_id,
              ...(command.room_id !== undefined && { room_id: command.room_id }),
            },
          },
        ];
      }
      case 'RemoveRole': {
        const current = command.room_id === undefined ? state.global : state.rooms.get(command.room_id);
        if (!current || !command.live) throw userRoleNotFound(command.user_id, command.room_id);
        return [
          {
            type: 'UserRoleRemoved',
            data: {
              user_id: command.user_id,
              role_name: current.role_name,
              ...(command.room_id !== undefined && { room_id: command.room_id }),
            },
          },
        ];
      }
    }
  },
};

/** The user's global role: the one assigned, or `default` (Chatkit's model: assigning replaces it). */
export const globalRoleOf = (catalogue: RolesState, user: UserRolesState): Role | null =>
  liveRole(catalogue, user.global, false) ?? catalogue.roles.get(roleKey('global', DEFAULT_ROLE)) ?? null;

/** The permissions a user holds: its global role's, plus its role's for `roomId` if given. */
export const compilePermissions = (catalogue: RolesState, user: UserRolesState, roomId?: string): Set<string> => {
  const granted = new Set<string>(globalRoleOf(catalogue, user)?.permissions ?? []);
  if (roomId !== undefined) for (const p of liveRole(catalogue, user.rooms.get(roomId), true)?.permissions ?? []) granted.add(p);
  return granted;
};
