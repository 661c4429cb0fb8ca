import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { ROOMS, roomDocumentId, roomsProjection } from './rooms.projection';

const stream = 'room-acme.r1';
const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
const created = () =>
  recorded(stream, 'RoomCreated', {
    id: 'r1',
    name: 'general',
    private: false,
    created_by_id: 'ann',
    push_notification_title_override: 'Hi',
    created_at: at(1),
  });

describe('rooms projection', () => {
  it('creates the room document and merges updates field by field', async () => {
    const docs = await project(roomsProjection, [
      created(),
      recorded(stream, 'RoomUpdated', { name: 'renamed', custom_data: { t: 1 }, updated_at: at(2) }),
    ]);
    expect(docs.get(`${ROOMS}|${roomDocumentId('acme', 'r1')}`)).toEqual({
      _id: roomDocumentId('acme', 'r1'),
      instance_id: 'acme',
      id: 'r1',
      name: 'renamed',
      private: false,
      created_by_id: 'ann',
      custom_data: { t: 1 },
      push_notification_title_override: 'Hi',
      created_at: at(1),
      updated_at: at(2),
    });
  });

  it('clears the push title override on null and removes deleted rooms', async () => {
    const cleared = await project(roomsProjection, [
      created(),
      recorded(stream, 'RoomUpdated', { push_notification_title_override: null, updated_at: at(2) }),
    ]);
    expect([...cleared.values()][0]).not.toHaveProperty('push_notification_title_override');
    expect((await project(roomsProjection, [created(), recorded(stream, 'RoomDeleted', { deleted_at: at(3) })])).size).toBe(0);
  });
});
