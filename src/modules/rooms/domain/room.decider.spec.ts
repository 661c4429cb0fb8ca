import { fold } from '../../../shared/domain/decider';
import { roomDecider, RoomCommand } from './room.decider';
import { RoomEvent } from './room.events';

const now = '2026-01-01T00:00:00.000Z';
const ann = { user_id: 'ann', user_created_at: 't1' };
const ben = { user_id: 'ben', user_created_at: 't2' };
const given = (...events: RoomEvent[]) => ({
  when: (command: RoomCommand) => () => roomDecider.decide(command, fold(roomDecider, events)),
});
const created = (priv = false): RoomEvent => ({
  type: 'RoomCreated',
  data: { id: 'r', name: 'r', private: priv, created_by_id: 'ann', created_at: now },
});
const joined = (...members: (typeof ann)[]): RoomEvent => ({ type: 'RoomMembersAdded', data: { members, added_at: now } });

describe('room decider', () => {
  it('creates a room with its creator and members as one decision', () => {
    const events = given().when({
      type: 'CreateRoom',
      id: 'r',
      name: 'r',
      private: false,
      created_by: ann,
      members: [ben, ann],
      now,
    })();
    expect(events.map((e) => e.type)).toEqual(['RoomCreated', 'RoomMembersAdded']);
    expect((events[1] as Extract<RoomEvent, { type: 'RoomMembersAdded' }>).data.members).toEqual([ann, ben]);
  });

  it('creates a room without members when nobody is named', () => {
    const events = given().when({ type: 'CreateRoom', id: 'r', name: 'r', private: false, members: [], now })();
    expect(events.map((e) => e.type)).toEqual(['RoomCreated']);
  });

  it('refuses an id that is taken, and commands on a missing room', () => {
    expect(given(created()).when({ type: 'CreateRoom', id: 'r', name: 'r', private: false, members: [], now })).toThrow(
      /already exists/,
    );
    expect(given().when({ type: 'UpdateRoom', id: 'r', name: 'x', now })).toThrow(/does not exist/);
    expect(given(created(), { type: 'RoomDeleted', data: { deleted_at: now } }).when({ type: 'DeleteRoom', id: 'r', now })).toThrow(
      /does not exist/,
    );
  });

  it('adds only new members, and joining twice decides nothing', () => {
    const state = [created(), joined(ann)];
    expect(given(...state).when({ type: 'AddMembers', id: 'r', members: [ann], join: true, su: false, now })()).toEqual([]);
    expect(given(...state).when({ type: 'AddMembers', id: 'r', members: [ann, ben], join: false, su: false, now })()).toEqual([
      { type: 'RoomMembersAdded', data: { members: [ben], added_at: now } },
    ]);
  });

  it('treats a re-created user as a new person, not a member', () => {
    const reborn = { user_id: 'ann', user_created_at: 't9' };
    expect(given(created(), joined(ann)).when({ type: 'AddMembers', id: 'r', members: [reborn], join: true, su: false, now })()).toEqual([
      { type: 'RoomMembersAdded', data: { members: [reborn], added_at: now } },
    ]);
  });

  it('lets nobody join a private room by themselves, but su and adding work', () => {
    expect(given(created(true)).when({ type: 'AddMembers', id: 'r', members: [ben], join: true, su: false, now })).toThrow(
      /private/,
    );
    expect(given(created(true)).when({ type: 'AddMembers', id: 'r', members: [ben], join: true, su: true, now })()).toHaveLength(1);
    expect(given(created(true)).when({ type: 'AddMembers', id: 'r', members: [ben], join: false, su: false, now })()).toHaveLength(1);
  });

  it('removes only members', () => {
    expect(given(created(), joined(ann, ben)).when({ type: 'RemoveMembers', id: 'r', user_ids: ['ben', 'zed'], now })()).toEqual([
      { type: 'RoomMembersRemoved', data: { user_ids: ['ben'], removed_at: now } },
    ]);
    expect(given(created()).when({ type: 'RemoveMembers', id: 'r', user_ids: ['ben'], now })()).toEqual([]);
  });

  it('tracks privacy through updates', () => {
    const state = fold(roomDecider, [created(), { type: 'RoomUpdated', data: { private: true, updated_at: now } }]);
    expect(state.private).toBe(true);
  });
});
