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
  /** The incarnation of the user it was given to (absent in logs written before it was recorded). */
  readonly user_created_at?: string;
}

export interface UserRolesState {
  /** The user's one global role besides the implicit `default`. */
  readonly global: Assignment | null;
  readonly rooms: ReadonlyMap<string, Assignment>;
}

export type UserRolesCommand =
  | { type: 'AssignRole'; user_id: string; user_created_at: string; role: Role; room_id?: string }
  | { type: 'RemoveRole'; user_id: string; user_created_at: string; room_id?: string; live: boolean };

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
        const { role_name, role_id, user_created_at } = event.data;
        const assignment: Assignment = { role_name, role_id, ...(user_created_at !== undefined && { user_created_at }) };
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
        const current = assignmentOf(forIncarnation(state, command.user_created_at), command.room_id);
        if (current && current.role_id === command.role.role_id) return [];
        return [
          {
            type: 'UserRoleAssigned',
            data: {
              user_id: command.user_id,
              role_name: command.role.name,
              role_id: command.role.role_id,
              ...(command.room_id !== undefined && { room_id: command.room_id }),
              user_created_at: command.user_created_at,
            },
          },
        ];
      }
      case 'RemoveRole': {
        const current = assignmentOf(forIncarnation(state, command.user_created_at), command.room_id);
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

const assignmentOf = (state: UserRolesState, roomId: string | undefined) =>
  roomId === undefined ? state.global : state.rooms.get(roomId);

/**
 * The assignments that belong to the user as it exists now: grants given to an earlier user
 * of the same id (deleted, then created again) lapse with it.
 */
export const forIncarnation = (state: UserRolesState, userCreatedAt: string | null): UserRolesState => {
  const current = (a: Assignment | null | undefined) => !!a && (a.user_created_at === undefined || a.user_created_at === userCreatedAt);
  const rooms = [...state.rooms].filter(([, a]) => current(a));
  if (current(state.global) === (state.global !== null) && rooms.length === state.rooms.size) return state;
  return { global: current(state.global) ? state.global : null, rooms: new Map(rooms) };
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
