import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { userDecider } from './user.decider';
import { UserEvent } from './user.events';

const now = '2026-01-01T00:00:00.000Z';
const given = deciderSpecification(userDecider);
const created: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A', created_at: now } };
const deleted: UserEvent = { type: 'UserDeleted', data: { deleted_at: now } };

describe('user decider', () => {
  it('creates a user that does not exist', () => {
    given()
      .when({ type: 'CreateUser', id: 'a', name: 'A', custom_data: { x: 1 }, now })
      .then([{ type: 'UserCreated', data: { id: 'a', name: 'A', avatar_url: undefined, custom_data: { x: 1 }, created_at: now } }]);
  });

  it('refuses to create a user twice with user_already_exists', () => {
    given(created).when({ type: 'CreateUser', id: 'a', name: 'A', now }).thenThrows(DomainError, { code: 'user_already_exists', status: 400 });
  });

  it('re-creates a deleted user, which counts as a new user', () => {
    const later = '2026-02-01T00:00:00.000Z';
    const events = given(created, deleted)
      .when({ type: 'CreateUser', id: 'a', name: 'A2', now: later })
      .then([{ type: 'UserCreated', data: { id: 'a', name: 'A2', created_at: later } }]);
    expect(fold(userDecider, [created, deleted, ...events]).createdAt).toBe(later);
  });

  it('updates and deletes only existing users', () => {
    given(created)
      .when({ type: 'UpdateUser', id: 'a', name: 'B', now })
      .then([{ type: 'UserUpdated', data: { name: 'B', avatar_url: undefined, custom_data: undefined, updated_at: now } }]);
    given().when({ type: 'UpdateUser', id: 'a', name: 'B', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/user_not_found' });
    given(created).when({ type: 'DeleteUser', id: 'a', now }).then([deleted]);
    given().when({ type: 'DeleteUser', id: 'a', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/user_not_found' });
    given(created, deleted).when({ type: 'DeleteUser', id: 'a', now }).thenThrows(DomainError, { code: 'not_found/user_not_found' });
  });

  it('remembers when a user of the id was last deleted, for the tokens issued before it', () => {
    expect(fold(userDecider, [created, deleted])).toEqual({ exists: false, createdAt: null, deletedAt: now, latestCreatedAt: now });
  });

  it('deletes only the incarnation an erasure names: a user created again with the id is another person', () => {
    const later = '2026-02-01T00:00:00.000Z';
    const again: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A2', created_at: later } };
    given(created).when({ type: 'DeleteUser', id: 'a', now, incarnation: now }).then([deleted]);
    given(created, deleted, again).when({ type: 'DeleteUser', id: 'a', now, incarnation: now }).thenThrows(DomainError, { code: 'not_found/user_not_found' });
  });
});
