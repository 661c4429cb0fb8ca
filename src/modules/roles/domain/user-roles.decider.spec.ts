import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { BUILT_IN_ROLES, DEFAULT_ROLE } from './permissions';
import { RoleEvent, UserRoleEvent } from './role.events';
import { Role, rolesDecider } from './roles.decider';
import { compilePermissions, forIncarnation, globalRoleOf, liveRole, UserRolesCommand, userRolesDecider } from './user-roles.decider';

const ann = '2026-01-01T00:00:00.000Z';
const annAgain = '2026-02-01T00:00:00.000Z';
const janitor: Role = { name: 'janitor', scope: 'global', permissions: ['room:delete', 'room:get'], role_id: 'j1' };
const moderator: Role = { name: 'moderator', scope: 'room', permissions: ['room:members:remove', 'room:update'], role_id: 'm1' };
const given = deciderSpecification(userRolesDecider);

const assign = (role: Role, room_id?: string, user_created_at = ann): UserRolesCommand => ({
  type: 'AssignRole',
  user_id: 'ann',
  user_created_at,
  role,
  ...(room_id !== undefined && { room_id }),
});
const remove = (room_id?: string, { live = true, user_created_at = ann } = {}): UserRolesCommand => ({
  type: 'RemoveRole',
  user_id: 'ann',
  user_created_at,
  live,
  ...(room_id !== undefined && { room_id }),
});
/** `user_created_at` null: logged before assignments recorded the user's incarnation. */
const assigned = (role: Role, room_id?: string, user_created_at: string | null = ann): UserRoleEvent => ({
  type: 'UserRoleAssigned',
  data: {
    user_id: 'ann',
    role_name: role.name,
    role_id: role.role_id,
    ...(room_id !== undefined && { room_id }),
    ...(user_created_at !== null && { user_created_at }),
  },
});
const removed = (role_name: string, room_id?: string): UserRoleEvent => ({
  type: 'UserRoleRemoved',
  data: { user_id: 'ann', role_name, ...(room_id !== undefined && { room_id }) },
});

const roleCreated = ({ name, scope, permissions, role_id }: Role): RoleEvent => ({
  type: 'RoleCreated',
  data: { name, scope, permissions: [...permissions], role_id },
});
const roleDeleted = ({ name, scope, role_id }: Role): RoleEvent => ({ type: 'RoleDeleted', data: { name, scope, role_id } });
/** The instance's role catalogue after `events`: the built-in roles, janitor and moderator. */
const catalogue = (...events: RoleEvent[]) => fold(rolesDecider, [roleCreated(janitor), roleCreated(moderator), ...events]);
const holding = (...events: UserRoleEvent[]) => fold(userRolesDecider, events);
const sorted = (permissions: Iterable<string>) => [...permissions].sort();
const DEFAULT_PERMISSIONS = sorted(BUILT_IN_ROLES.find((r) => r.name === DEFAULT_ROLE)!.permissions);

describe('user roles decider', () => {
  it('assigns a user one global role, and a role in each room', () => {
    given().when(assign(janitor)).then([assigned(janitor)]);
    given().when(assign(moderator, 'r1')).then([assigned(moderator, 'r1')]);
    given(assigned(moderator, 'r1')).when(assign(moderator, 'r2')).then([assigned(moderator, 'r2')]);
  });

  it('assigning the role a user holds decides nothing; another role, or the role deleted and created again, replaces it', () => {
    given(assigned(janitor)).when(assign(janitor)).thenNothingHappened();
    given(assigned(moderator, 'r1')).when(assign(moderator, 'r1')).thenNothingHappened();
    const recreated = { ...janitor, role_id: 'j2' };
    given(assigned(janitor)).when(assign(recreated)).then([assigned(recreated)]);
    const admin: Role = { name: 'admin', scope: 'global', permissions: [], role_id: 'builtin' };
    given(assigned(janitor)).when(assign(admin)).then([assigned(admin)]);
  });

  it('a user created again under the same id holds none of the roles of the one before', () => {
    given(assigned(janitor)).when(assign(janitor, undefined, annAgain)).then([assigned(janitor, undefined, annAgain)]);
    given(assigned(moderator, 'r1')).when(remove('r1', { user_created_at: annAgain })).thenThrows(DomainError, { code: 'not_found/user_role_not_found' });
    // Assignments logged before incarnations were recorded belong to whoever holds the id.
    given(assigned(janitor, undefined, null)).when(assign(janitor, undefined, annAgain)).thenNothingHappened();
  });

  it('removes a role the user holds', () => {
    given(assigned(janitor)).when(remove()).then([removed('janitor')]);
    given(assigned(moderator, 'r1'), assigned(moderator, 'r2')).when(remove('r1')).then([removed('moderator', 'r1')]);
  });

  it('refuses with 404 to remove a role the user does not hold, or one whose role no longer exists', () => {
    given()
      .when(remove())
      .thenThrows(DomainError, { code: 'not_found/user_role_not_found', status: 404 }, /"ann" has no global role besides default/);
    given(assigned(moderator, 'r1')).when(remove('r2')).thenThrows(DomainError, { status: 404 }, /"ann" has no role in the room "r2"/);
    given(assigned(janitor), removed('janitor')).when(remove()).thenThrows(DomainError, { code: 'not_found/user_role_not_found' });
    given(assigned(janitor)).when(remove(undefined, { live: false })).thenThrows(DomainError, { code: 'not_found/user_role_not_found' });
  });
});

describe('compilePermissions: what a user may do', () => {
  it('a user without a role holds default\'s permissions; a global role replaces them', () => {
    expect(sorted(compilePermissions(catalogue(), holding()))).toEqual(DEFAULT_PERMISSIONS);
    expect(sorted(compilePermissions(catalogue(), holding(assigned(janitor))))).toEqual(['room:delete', 'room:get']);
    expect(globalRoleOf(catalogue(), holding())?.name).toBe(DEFAULT_ROLE);
  });

  it('a room role adds its permissions in its own room only', () => {
    const user = holding(assigned(moderator, 'r1'));
    expect(sorted(compilePermissions(catalogue(), user, 'r1'))).toEqual(sorted([...DEFAULT_PERMISSIONS, 'room:update']));
    expect(sorted(compilePermissions(catalogue(), user, 'r2'))).toEqual(DEFAULT_PERMISSIONS);
    expect(sorted(compilePermissions(catalogue(), user))).toEqual(DEFAULT_PERMISSIONS);
    expect(compilePermissions(catalogue(), user, 'r2').has('room:update')).toBe(false);
  });

  it('an assignment lapses with its role, deleted or deleted and created again: the user is back to default', () => {
    const user = holding(assigned(janitor), assigned(moderator, 'r1'));
    const recreated = [roleDeleted(janitor), roleCreated({ ...janitor, role_id: 'j2' }), roleDeleted(moderator)];
    for (const roles of [catalogue(roleDeleted(janitor), roleDeleted(moderator)), catalogue(...recreated)]) {
      expect(sorted(compilePermissions(roles, user, 'r1'))).toEqual(DEFAULT_PERMISSIONS);
      expect(liveRole(roles, user.global, false)).toBeNull();
      expect(liveRole(roles, user.rooms.get('r1'), true)).toBeNull();
    }
    expect(liveRole(catalogue(), user.global, false)).toEqual(janitor);
  });

  it('without a default role (a wiped instance) a user without a role holds nothing', () => {
    const wiped = rolesDecider.wipedState!();
    expect(globalRoleOf(wiped, holding())).toBeNull();
    expect([...compilePermissions(wiped, holding(assigned(moderator, 'r1')), 'r1')]).toEqual([]);
  });

  it('counts only the grants given to the user as it exists now (forIncarnation)', () => {
    const user = holding(assigned(janitor), assigned(moderator, 'r1', annAgain), assigned(moderator, 'r2', null));
    expect(forIncarnation(user, ann)).toEqual({ global: user.global, rooms: new Map([['r2', user.rooms.get('r2')]]) });
    const now = forIncarnation(user, annAgain);
    expect(now.global).toBeNull();
    expect([...now.rooms.keys()].sort()).toEqual(['r1', 'r2']);
    expect(sorted(compilePermissions(catalogue(), now))).toEqual(DEFAULT_PERMISSIONS);
    expect(compilePermissions(catalogue(), now, 'r1').has('room:update')).toBe(true);
    // A deleted user (no incarnation now) keeps only the grants logged without one.
    expect([...forIncarnation(user, null).rooms.keys()]).toEqual(['r2']);
  });
});
