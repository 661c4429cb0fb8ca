import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { roomDecider } from './room.decider';
import { RoomEvent } from './room.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const ann = { user_id: 'ann', user_created_at: 't1' };
const ben = { user_id: 'ben', user_created_at: 't2' };
const given = deciderSpecification(roomDecider);
const created = (priv = false, creator: { created_by_id?: string } = { created_by_id: 'ann' }): RoomEvent => ({
  type: 'RoomCreated',
  data: { id: 'r', name: 'r', private: priv, ...creator, created_at: now },
});
const joined = (...members: (typeof ann)[]): RoomEvent => ({ type: 'RoomMembersAdded', data: { members, added_at: now } });
const deleted: RoomEvent = { type: 'RoomDeleted', data: { deleted_at: now } };

describe('room decider', () => {
  it('creates a room with its creator and members as one decision', () => {
    given()
      .when({ type: 'CreateRoom', id: 'r', name: 'r', private: false, created_by: ann, members: [ben, ann], now })
      .then([created(), joined(ann, ben)]);
  });

  it('creates a room without members when nobody is named', () => {
    given().when({ type: 'CreateRoom', id: 'r', name: 'r', private: false, members: [], now }).then([created(false, {})]);
  });

  it('refuses an id that is taken, and commands on a missing room', () => {
    given(created())
      .when({ type: 'CreateRoom', id: 'r', name: 'r', private: false, members: [], now })
      .thenThrows(DomainError, /already exists/, { code: 'bad_request/room_already_exists' });
    given().when({ type: 'UpdateRoom', id: 'r', name: 'x', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/room_not_found' });
    given(created(), deleted).when({ type: 'DeleteRoom', id: 'r', now }).thenThrows(DomainError, /does not exist/, { code: 'not_found/room_not_found' });
  });

  it('updates (naming the incarnation updated, whose key seals its name) and deletes an existing room', () => {
    given(created())
      .when({ type: 'UpdateRoom', id: 'r', name: 'x', private: true, now: later })
      .then([
        {
          type: 'RoomUpdated',
          data: { name: 'x', private: true, custom_data: undefined, push_notification_title_override: undefined, updated_at: later, room_created_at: now },
        },
      ]);
    given(created()).when({ type: 'DeleteRoom', id: 'r', now }).then([deleted]);
  });

  it('adds only new members, and joining twice decides nothing', () => {
    given(created(), joined(ann)).when({ type: 'AddMembers', id: 'r', members: [ann], join: true, su: false, now }).thenNothingHappened();
    given(created(), joined(ann)).when({ type: 'AddMembers', id: 'r', members: [ann, ben], join: false, su: false, now }).then([joined(ben)]);
  });

  it('treats a re-created user as a new person, not a member', () => {
    const reborn = { user_id: 'ann', user_created_at: 't9' };
    given(created(), joined(ann)).when({ type: 'AddMembers', id: 'r', members: [reborn], join: true, su: false, now }).then([joined(reborn)]);
  });

  it('lets nobody join a private room by themselves, but su and adding work', () => {
    given(created(true))
      .when({ type: 'AddMembers', id: 'r', members: [ben], join: true, su: false, now })
      .thenThrows(DomainError, /private/, { code: 'forbidden/room_is_private' });
    given(created(true)).when({ type: 'AddMembers', id: 'r', members: [ben], join: true, su: true, now }).then([joined(ben)]);
    given(created(true)).when({ type: 'AddMembers', id: 'r', members: [ben], join: false, su: false, now }).then([joined(ben)]);
  });

  it('removes only members', () => {
    given(created(), joined(ann, ben))
      .when({ type: 'RemoveMembers', id: 'r', user_ids: ['ben', 'zed'], now })
      .then([{ type: 'RoomMembersRemoved', data: { user_ids: ['ben'], removed_at: now } }]);
    given(created()).when({ type: 'RemoveMembers', id: 'r', user_ids: ['ben'], now }).thenNothingHappened();
  });

  it('records a leave as such, so that webhooks tell it from a removal', () => {
    given(created(), joined(ann, ben))
      .when({ type: 'RemoveMembers', id: 'r', user_ids: ['ben'], leave: true, now })
      .then([{ type: 'RoomMembersRemoved', data: { user_ids: ['ben'], removed_at: now, left: true } }]);
  });

  it('tracks privacy through updates', () => {
    const state = fold(roomDecider, [created(), { type: 'RoomUpdated', data: { private: true, updated_at: now } }]);
    expect(state.private).toBe(true);
  });
});
