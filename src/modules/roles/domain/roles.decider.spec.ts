import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { compilePermissions, userRolesDecider } from './user-roles.decider';
import { ADMIN_ROLE, DEFAULT_ROLE, PERMISSION_NAMES } from './permissions';
import { RoleEvent } from './role.events';
import { roleKey, RolesCommand, rolesDecider, RolesState } from './roles.decider';

const names = (state: RolesState) => [...state.roles.values()].map((r) => `${r.scope}/${r.name}`).sort();
const noAssignments = userRolesDecider.initialState();
const given = deciderSpecification(rolesDecider);
const createDefault: RolesCommand = { type: 'CreateRole', name: DEFAULT_ROLE, scope: 'global', permissions: ['room:get'], role_id: 'r1' };
const janitor: RoleEvent = { type: 'RoleCreated', data: { name: 'janitor', scope: 'room', permissions: ['room:delete'], role_id: 'j1' } };
const janitorDeleted: RoleEvent = { type: 'RoleDeleted', data: { name: 'janitor', scope: 'room', role_id: 'j1' } };
const change = (add: string[], remove: string[], name = 'janitor'): RolesCommand => ({ type: 'ChangeRolePermissions', name, scope: 'room', add, remove });

describe('roles decider', () => {
  it('a new instance has the built-in default and admin roles, and default is what every user holds', () => {
    const state = rolesDecider.initialState();
    expect(names(state)).toEqual([`global/${ADMIN_ROLE}`, `global/${DEFAULT_ROLE}`]);
    expect(compilePermissions(state, noAssignments).has('room:create')).toBe(true);
    given().when(createDefault).thenThrows(DomainError, /already exists/, { code: 'conflict/role_already_exists', status: 409 });
  });

  it('after a wipe there is no role: users hold nothing until default is created again', () => {
    const wiped = rolesDecider.wipedState!();
    expect(names(wiped)).toEqual([]);
    expect([...compilePermissions(wiped, noAssignments)]).toEqual([]);
    const created = given
      .afterWipe()
      .when(createDefault)
      .then([{ type: 'RoleCreated', data: { name: DEFAULT_ROLE, scope: 'global', permissions: ['room:get'], role_id: 'r1' } }]);
    const state = fold(rolesDecider, created, wiped);
    expect([...compilePermissions(state, noAssignments)]).toEqual(['room:get']);
  });

  it('a BuiltInRolesRestored in a log folds to the built-in roles, whatever came before it', () => {
    const events: RoleEvent[] = [
      { type: 'RoleCreated', data: { name: 'janitor', scope: 'global', permissions: ['room:delete'], role_id: 'j1' } },
      { type: 'BuiltInRolesRestored', data: { epoch: 'e1' } },
    ];
    const state = fold(rolesDecider, events, rolesDecider.wipedState!());
    expect(names(state)).toEqual([`global/${ADMIN_ROLE}`, `global/${DEFAULT_ROLE}`]);
    expect(state.roles.get(roleKey('global', DEFAULT_ROLE))!.role_id).toBe('builtin:e1');
  });

  it('creates a role holding each permission once; a name taken in one scope is free in the other', () => {
    given()
      .when({ type: 'CreateRole', name: 'janitor', scope: 'room', permissions: ['room:delete', 'room:delete'], role_id: 'j1' })
      .then([janitor]);
    given()
      .when({ type: 'CreateRole', name: DEFAULT_ROLE, scope: 'room', permissions: [], role_id: 'd2' })
      .then([{ type: 'RoleCreated', data: { name: DEFAULT_ROLE, scope: 'room', permissions: [], role_id: 'd2' } }]);
    given(janitor)
      .when({ type: 'CreateRole', name: 'janitor', scope: 'room', permissions: [], role_id: 'j2' })
      .thenThrows(DomainError, { code: 'conflict/role_already_exists' });
  });

  it('refuses permissions Chatkit does not know with 422, naming them and the allowed ones', () => {
    const error = given()
      .when({ type: 'CreateRole', name: 'pilot', scope: 'global', permissions: ['room:get', 'rooms:fly', 7 as unknown as string], role_id: 'p1' })
      .thenThrows(DomainError, { code: 'unprocessable_entity/invalid_permission', status: 422 }, /"rooms:fly", 7; allowed: /);
    expect((error as Error).message).toContain(PERMISSION_NAMES.join(', '));
    given(janitor).when(change(['room:fly'], [])).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_permission' });
    given(janitor).when(change([], ['room:fly'])).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_permission' });
  });

  it('deletes a role by scope and name, naming its role_id (its assignments lapse with it); an unknown role is 404', () => {
    given(janitor).when({ type: 'DeleteRole', name: 'janitor', scope: 'room' }).then([janitorDeleted]);
    given().when({ type: 'DeleteRole', name: DEFAULT_ROLE, scope: 'global' }).then([
      { type: 'RoleDeleted', data: { name: DEFAULT_ROLE, scope: 'global', role_id: 'builtin' } },
    ]);
    for (const history of [[], [janitor, janitorDeleted]]) {
      given(history)
        .when({ type: 'DeleteRole', name: 'janitor', scope: 'room' })
        .thenThrows(DomainError, { code: 'not_found/role_not_found', status: 404 }, /no room role named "janitor"/);
    }
    given(janitor).when({ type: 'DeleteRole', name: 'janitor', scope: 'global' }).thenThrows(DomainError, { code: 'not_found/role_not_found' });
  });

  it('creates a deleted role again as another role (a new role_id)', () => {
    given(janitor, janitorDeleted)
      .when({ type: 'CreateRole', name: 'janitor', scope: 'room', permissions: ['room:update'], role_id: 'j2' })
      .then([{ type: 'RoleCreated', data: { name: 'janitor', scope: 'room', permissions: ['room:update'], role_id: 'j2' } }]);
  });

  it('changes a role\'s permissions by what differs, adding winning over removing the same one; no difference decides nothing', () => {
    given(janitor)
      .when(change(['room:update', 'room:update'], ['room:delete', 'room:update', 'user:get']))
      .then([
        {
          type: 'RolePermissionsChanged',
          data: { name: 'janitor', scope: 'room', added: ['room:update'], removed: ['room:delete'], permissions: ['room:update'] },
        },
      ]);
    given(janitor).when(change(['room:delete'], ['user:get'])).thenNothingHappened();
    given(janitor).when(change(['room:get'], [], 'ghost')).thenThrows(DomainError, { code: 'not_found/role_not_found', status: 404 });
  });

  it('folds a change of permissions into the role it names, and ignores one for a role that is gone', () => {
    const changed: RoleEvent = {
      type: 'RolePermissionsChanged',
      data: { name: 'janitor', scope: 'room', added: ['room:update'], removed: [], permissions: ['room:delete', 'room:update'] },
    };
    expect(fold(rolesDecider, [janitor, changed]).roles.get(roleKey('room', 'janitor'))).toEqual({
      name: 'janitor',
      scope: 'room',
      permissions: ['room:delete', 'room:update'],
      role_id: 'j1',
    });
    expect(names(fold(rolesDecider, [janitor, janitorDeleted, changed]))).toEqual([`global/${ADMIN_ROLE}`, `global/${DEFAULT_ROLE}`]);
  });
});
