import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { FOREVER, pinsProjection } from './pins.projection';

const pinned = (room: string, message: number, until?: string) =>
  recorded(`pins-acme.${room}`, 'MessagePinned', {
    room_id: room,
    room_created_at: 'r0',
    message_id: message,
    pinned_by: 'ann',
    pinned_at: 't',
    ...(until !== undefined && { until }),
  });
const ids = (docs: Map<string, { [k: string]: unknown }>) => [...docs.values()].map((d) => `${d.room_id}:${d.message_id}`).sort();

describe('pins projection', () => {
  it('keeps a room’s pins, with until (or the end of time) to compare with now', async () => {
    const docs = await project(pinsProjection, [pinned('r1', 1), pinned('r1', 2, '2027-01-01T00:00:00.000Z')]);
    expect([...docs.values()].map((d) => [d.message_id, d.until, d.shown_until])).toEqual([
      [1, undefined, FOREVER],
      [2, '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ]);
  });

  it('keeps pins and unpins made under a shadow ban apart, per user, over no one else’s pins', async () => {
    const docs = await project(pinsProjection, [
      pinned('r1', 1),
      recorded('pins-acme.r1', 'MessagePinned', { room_id: 'r1', room_created_at: 'r0', message_id: 2, pinned_by: 'eve', pinned_at: 't', shadow: true }),
      recorded('pins-acme.r1', 'MessageUnpinned', { room_id: 'r1', room_created_at: 'r0', message_id: 1, unpinned_at: 't2', unpinned_by: 'eve', shadow: true }),
    ]);
    expect([...docs.entries()].map(([key, d]) => [key.split('|')[0], d.message_id, d.user_id, d.pinned]).sort()).toEqual([
      ['pins', 1, undefined, undefined],
      ['shadow_pins', 1, 'eve', false],
      ['shadow_pins', 2, 'eve', true],
    ]);
  });

  it('forgets an unpinned message, a deleted message and a deleted room’s pins', async () => {
    const docs = await project(pinsProjection, [
      pinned('r1', 1),
      pinned('r1', 2),
      pinned('r1', 3),
      pinned('r2', 4),
      recorded('pins-acme.r1', 'MessageUnpinned', { room_id: 'r1', room_created_at: 'r0', message_id: 1, unpinned_at: 't' }),
      recorded('message-acme.2', 'MessageDeleted', { id: 2, room_id: 'r1', tombstone: false, deleted_at: 't' }),
      recorded('room-acme.r2', 'RoomDeleted', { deleted_at: 't' }),
    ]);
    expect(ids(docs)).toEqual(['r1:3']);
  });
});
