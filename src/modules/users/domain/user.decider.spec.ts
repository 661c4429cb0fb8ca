import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { userDecider, UserCommand } from './user.decider';
import { UserEvent } from './user.events';

const now = '2026-01-01T00:00:00.000Z';
const given = (...events: UserEvent[]) => ({
  when: (command: UserCommand) => () => userDecider.decide(command, fold(userDecider, events)),
});
const created: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A', created_at: now } };

describe('user decider', () => {
  it('creates a user that does not exist', () => {
    expect(given().when({ type: 'CreateUser', id: 'a', name: 'A', custom_data: { x: 1 }, now })()).toEqual([
      { type: 'UserCreated', data: { id: 'a', name: 'A', avatar_url: undefined, custom_data: { x: 1 }, created_at: now } },
    ]);
  });

  it('refuses to create a user twice with user_already_exists', () => {
    const attempt = given(created).when({ type: 'CreateUser', id: 'a', name: 'A', now });
    expect(attempt).toThrow(DomainError);
    try {
      attempt();
    } catch (e) {
      expect((e as DomainError).code).toBe('user_already_exists');
      expect((e as DomainError).status).toBe(400);
    }
  });

  it('re-creates a deleted user, which counts as a new user', () => {
    const deleted: UserEvent = { type: 'UserDeleted', data: { deleted_at: now } };
    const later = '2026-02-01T00:00:00.000Z';
    const events = given(created, deleted).when({ type: 'CreateUser', id: 'a', name: 'A2', now: later })();
    expect(events[0].type).toBe('UserCreated');
    expect(fold(userDecider, [created, deleted, ...events]).createdAt).toBe(later);
  });

  it('updates and deletes only existing users', () => {
    expect(given(created).when({ type: 'UpdateUser', id: 'a', name: 'B', now })()).toEqual([
      { type: 'UserUpdated', data: { name: 'B', avatar_url: undefined, custom_data: undefined, updated_at: now } },
    ]);
    expect(given().when({ type: 'UpdateUser', id: 'a', name: 'B', now })).toThrow(/does not exist/);
    expect(given(created).when({ type: 'DeleteUser', id: 'a', now })()).toEqual([
      { type: 'UserDeleted', data: { deleted_at: now } },
    ]);
    expect(given().when({ type: 'DeleteUser', id: 'a', now })).toThrow(/does not exist/);
  });
});
