import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { cursorsProjection } from './cursors.projection';

const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
/** A set in the legacy per-user stream (data directories written before per-room streams). */
const legacySet = (instance: string, user: string, room: string, position: number, m: number) =>
  recorded(`cursor-${instance}.${user}`, 'ReadCursorSet', {
    room_id: room,
    position,
    user_created_at: at(0),
    room_created_at: at(0),
    updated_at: at(m),
  });
const set = (instance: string, user: string, room: string, position: number, m: number) =>
  recorded(`readcursor-${instance}.${JSON.stringify([user, room])}`, 'ReadCursorSet', {
    room_id: room,
    user_id: user,
    position,
    user_created_at: at(0),
    room_created_at: at(0),
    updated_at: at(m),
  });
const cursors = (docs: Map<string, { [k: string]: unknown }>) =>
  [...docs.values()].map((d) => `${d.instance_id}/${d.room_id}:${d.user_id}=${d.position}@${d.updated_at}`).sort();

describe('read cursors projection', () => {
  it('keeps one cursor per user and room, in the wire shape', async () => {
    const docs = await project(cursorsProjection, [set('acme', 'ann', 'r1', 3, 1), set('acme', 'ann', 'r1', 7, 2)]);
    expect([...docs.values()]).toEqual([
      {
        _id: JSON.stringify(['acme', 'r1', 'ann']),
        instance_id: 'acme',
        room_id: 'r1',
        user_id: 'ann',
        cursor_type: 0,
        position: 7,
        updated_at: at(2),
      },
    ]);
  });

  it('keeps users, rooms and instances apart, with user ids that hold dots', async () => {
    const docs = await project(cursorsProjection, [
      set('acme', 'ann.b', 'r1', 1, 1),
      set('acme', 'ben', 'r1', 2, 1),
      set('acme', 'ann.b', 'r2', 3, 1),
      set('other', 'ann.b', 'r1', 4, 1),
    ]);
    expect(cursors(docs)).toEqual([
      `acme/r1:ann.b=1@${at(1)}`,
      `acme/r1:ben=2@${at(1)}`,
      `acme/r2:ann.b=3@${at(1)}`,
      `other/r1:ann.b=4@${at(1)}`,
    ]);
  });

  it('folds the legacy per-user streams and the per-room streams into the same cursors', async () => {
    const docs = await project(cursorsProjection, [
      legacySet('acme', 'ann.b', 'r1', 3, 1),
      legacySet('acme', 'ann.b', 'r2', 4, 1),
      set('acme', 'ann.b', 'r1', 8, 2),
    ]);
    expect(cursors(docs)).toEqual([`acme/r1:ann.b=8@${at(2)}`, `acme/r2:ann.b=4@${at(1)}`]);
  });

  it('drops the cursors of a deleted room and of a deleted user, in that instance only', async () => {
    const docs = await project(cursorsProjection, [
      set('acme', 'ann', 'r1', 1, 1),
      set('acme', 'ben', 'r1', 2, 1),
      legacySet('acme', 'ann', 'r2', 3, 1),
      set('acme', 'ben', 'r2', 4, 1),
      set('other', 'ann', 'r1', 5, 1),
      recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(2) }),
      recorded('user-acme.ann', 'UserDeleted', { deleted_at: at(3) }),
    ]);
    expect(cursors(docs)).toEqual([`acme/r2:ben=4@${at(1)}`, `other/r1:ann=5@${at(1)}`]);
  });

  it('ignores events of its types on streams of other categories', async () => {
    const docs = await project(cursorsProjection, [
      set('acme', 'ann', 'r1', 1, 1),
      recorded('user-acme.r1', 'RoomDeleted', { deleted_at: at(2) }),
      recorded('room-acme.ann', 'UserDeleted', { deleted_at: at(2) }),
      recorded('user-acme.ann', 'ReadCursorSet', {
        room_id: 'r1',
        user_id: 'ann',
        position: 9,
        user_created_at: at(0),
        room_created_at: at(0),
        updated_at: at(2),
      }),
    ]);
    expect(cursors(docs)).toEqual([`acme/r1:ann=1@${at(1)}`]);
  });
});
