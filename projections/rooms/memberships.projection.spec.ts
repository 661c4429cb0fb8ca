import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { membershipsProjection } from './memberships.projection';

const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
const added = (room: string, users: string[], m: number) =>
  recorded(`room-acme.${room}`, 'RoomMembersAdded', {
    members: users.map((user_id) => ({ user_id, user_created_at: at(0) })),
    added_at: at(m),
  });
const members = (docs: Map<string, { [k: string]: unknown }>) =>
  [...docs.values()].map((d) => `${d.room_id}:${d.user_id}@${d.joined_at}`).sort();

describe('memberships projection', () => {
  it('records who joined when, keeping the first join time', async () => {
    const docs = await project(membershipsProjection, [added('r1', ['ann', 'ben'], 1), added('r1', ['ann'], 2)]);
    expect(members(docs)).toEqual([`r1:ann@${at(1)}`, `r1:ben@${at(1)}`]);
  });

  it('removes members who leave', async () => {
    const docs = await project(membershipsProjection, [
      added('r1', ['ann', 'ben'], 1),
      recorded('room-acme.r1', 'RoomMembersRemoved', { user_ids: ['ann'], removed_at: at(2) }),
    ]);
    expect(members(docs)).toEqual([`r1:ben@${at(1)}`]);
  });

  it('drops every membership of a deleted room and of a deleted user', async () => {
    const docs = await project(membershipsProjection, [
      added('r1', ['ann', 'ben'], 1),
      added('r2', ['ann', 'ben'], 1),
      recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(2) }),
      recorded('user-acme.ann', 'UserDeleted', { deleted_at: at(3) }),
    ]);
    expect(members(docs)).toEqual([`r2:ben@${at(1)}`]);
  });

  it('does not touch another instance when a user of the same id is deleted', async () => {
    const docs = await project(membershipsProjection, [
      added('r1', ['ann'], 1),
      recorded('user-other.ann', 'UserDeleted', { deleted_at: at(2) }),
    ]);
    expect(members(docs)).toEqual([`r1:ann@${at(1)}`]);
  });
});
