import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { userDecider } from './user.decider';
import { UserEvent } from './user.events';

const now = '2026-01-01T00:00:00.000Z';
const given = deciderSpecification(userDecider);
const created: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A', created_at: now } };
const deleted: UserEvent = { type: 'UserDeleted', data: { deleted_at: now, user_created_at: now } };

describe('user decider', () => {
  it('creates a user that does not exist', () => {
    given()
      .when({ type: 'CreateUser', id: 'a', name: 'A', custom_data: { x: 1 }, now })
      .then([{ type: 'UserCreated', data: { id: 'a', name: 'A', avatar_url: undefined, custom_data: { x: 1 }, created_at: now, profile_key: undefined } }]);
  });

  it('refuses to create a user twice with user_already_exists', () => {
    given(created).when({ type: 'CreateUser', id: 'a', name: 'A', now }).thenThrows(DomainError, { code: 'user_already_exists', status: 400 });
  });

  it('re-creates a deleted user, which counts as a new user', () => {
    const later = '2026-02-01T00:00:00.000Z';
    const events = given(created, deleted)
      .when({ type: 'CreateUser', id: 'a', name: 'A2', now: later })
      .then([{ type: 'UserCreated', data: { id: 'a', name: 'A2', created_at: later, profile_key: undefined } }]);
    expect(fold(userDecider, [created, deleted, ...events]).createdAt).toBe(later);
  });

  it('updates and deletes only existing users', () => {
    given(created)
      .when({ type: 'UpdateUser', id: 'a', name: 'B', now })
      .then([{ type: 'UserUpdated', data: { name: 'B', avatar_url: undefined, custom_data: undefined, updated_at: now, user_created_at: now } }]);
    given().when({ type: 'UpdateUser', id: 'a', name: 'B', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/user_not_found' });
    given(created).when({ type: 'DeleteUser', id: 'a', now }).then([deleted]);
    given().when({ type: 'DeleteUser', id: 'a', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/user_not_found' });
    given(created, deleted).when({ type: 'DeleteUser', id: 'a', now }).thenThrows(DomainError, { code: 'not_found/user_not_found' });
  });

  it('names the profile key and the incarnation an update or a delete concerns, whose key seals or is destroyed', () => {
    const later = '2026-02-01T00:00:00.000Z';
    given().when({ type: 'CreateUser', id: 'a', name: 'A', now: later, profile_key: 'k2' }).then([{ type: 'UserCreated', data: { id: 'a', name: 'A', created_at: later, profile_key: 'k2' } }]);
    const again: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A2', created_at: later, profile_key: 'k2' } };
    given(created, deleted, again)
      .when({ type: 'UpdateUser', id: 'a', custom_data: { y: 2 }, now: later })
      .then([{ type: 'UserUpdated', data: { name: undefined, avatar_url: undefined, custom_data: { y: 2 }, updated_at: later, user_created_at: later, profile_key: 'k2' } }]);
    given(created, deleted, again).when({ type: 'DeleteUser', id: 'a', now: later }).then([{ type: 'UserDeleted', data: { deleted_at: later, user_created_at: later, profile_key: 'k2' } }]);
    // A user created before profiles were sealed names no key: the incarnation alone.
    given(created).when({ type: 'DeleteUser', id: 'a', now: later }).then([{ type: 'UserDeleted', data: { deleted_at: later, user_created_at: now } }]);
  });

  it('remembers when a user of the id was last deleted, for the tokens issued before it', () => {
    expect(fold(userDecider, [created, deleted])).toEqual({ exists: false, createdAt: null, deletedAt: now, profileKey: null, latestCreatedAt: now });
  });

  it('deletes only the incarnation an erasure names: a user created again with the id is another person', () => {
    const later = '2026-02-01T00:00:00.000Z';
    const again: UserEvent = { type: 'UserCreated', data: { id: 'a', name: 'A2', created_at: later } };
    given(created).when({ type: 'DeleteUser', id: 'a', now, incarnation: now }).then([{ type: 'UserDeleted', data: { deleted_at: now, user_created_at: now } }]);
    given(created, deleted, again).when({ type: 'DeleteUser', id: 'a', now, incarnation: now }).thenThrows(DomainError, { code: 'not_found/user_not_found' });
  });
});
