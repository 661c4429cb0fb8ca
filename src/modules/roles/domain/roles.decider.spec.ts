import { fold } from '../../../shared/domain/decider';
import { compilePermissions, userRolesDecider } from './user-roles.decider';
import { ADMIN_ROLE, DEFAULT_ROLE } from './permissions';
import { RoleEvent } from './role.events';
import { roleKey, RolesCommand, rolesDecider, RolesState } from './roles.decider';

const names = (state: RolesState) => [...state.roles.values()].map((r) => `${r.scope}/${r.name}`).sort();
const noAssignments = userRolesDecider.initialState();
const createDefault: RolesCommand = { type: 'CreateRole', name: DEFAULT_ROLE, scope: 'global', permissions: ['room:get'], role_id: 'r1' };

describe('roles decider', () => {
  it('a new instance has the built-in default and admin roles, and default is what every user holds', () => {
    const state = rolesDecider.initialState();
    expect(names(state)).toEqual([`global/${ADMIN_ROLE}`, `global/${DEFAULT_ROLE}`]);
    expect(compilePermissions(state, noAssignments).has('room:create')).toBe(true);
    expect(() => rolesDecider.decide(createDefault, state)).toThrow(/already exists/);
  });

  it('after a wipe there is no role: users hold nothing until default is created again', () => {
    const wiped = rolesDecider.wipedState!();
    expect(names(wiped)).toEqual([]);
    expect([...compilePermissions(wiped, noAssignments)]).toEqual([]);
    const created = rolesDecider.decide(createDefault, wiped);
    expect(created).toEqual([{ type: 'RoleCreated', data: { name: DEFAULT_ROLE, scope: 'global', permissions: ['room:get'], role_id: 'r1' } }]);
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
});
