import { dataKeyIds } from '../../../shared/domain/personal-data';
import { RoomCreated, RoomDeleted, RoomUpdated } from './room.events';
import { roomCreatedPersonalData, roomDeletedShredsRoom, roomUpdatedPersonalData } from './room.personal-data';

const created = (created_at: string): RoomCreated => ({
  type: 'RoomCreated',
  data: { id: 'r/1', name: 'secret', private: false, custom_data: { a: 1 }, push_notification_title_override: 'title', created_at },
});
const updated = (room_created_at?: string): RoomUpdated => ({ type: 'RoomUpdated', data: { name: 'n', updated_at: 'u', ...(room_created_at && { room_created_at }) } });
const deletion: RoomDeleted = { type: 'RoomDeleted', data: { deleted_at: 'd' } };
const STREAM = 'room-acme.r/1';

describe('room personal data', () => {
  it("seals a room's name, custom data and push title under its incarnation's key, and its updates under the same", () => {
    const key = roomCreatedPersonalData.keyOf(created('2026-01-01T00:00:00.000Z'), STREAM);
    expect(key).toEqual({ id: 'acme/room/r%2F1@2026-01-01T00%3A00%3A00.000Z', owner: null });
    expect(key!.id).toBe(dataKeyIds.room('acme', 'r/1', '2026-01-01T00:00:00.000Z'));
    expect(roomUpdatedPersonalData.keyOf(updated('2026-01-01T00:00:00.000Z'), STREAM)).toEqual(key);
    expect(roomCreatedPersonalData.fields).toEqual(['name', 'custom_data', 'push_notification_title_override']);
    expect(roomUpdatedPersonalData.fields).toEqual(roomCreatedPersonalData.fields);
  });

  it('leaves an update from a log written before its incarnation was recorded as it is', () => {
    expect(roomUpdatedPersonalData.keyOf(updated(), STREAM)).toBeNull();
  });

  it("places an update of a log written before sealing by the room's stream: the incarnation created before it", async () => {
    const history = { readStream: async () => [created('2025-12-01T00:00:00.000Z'), updated()] };
    expect(await roomUpdatedPersonalData.keyOfWritten!({ ...updated(), data: { name: 'n', updated_at: '2026-01-02T00:00:00.000Z' } }, STREAM, history)).toEqual(
      roomCreatedPersonalData.keyOf(created('2025-12-01T00:00:00.000Z'), STREAM),
    );
  });

  it('gives a room created again with the same id another key', () => {
    expect(roomCreatedPersonalData.keyOf(created('t1'), STREAM)!.id).not.toBe(roomCreatedPersonalData.keyOf(created('t2'), STREAM)!.id);
  });

  it("destroys the key of every incarnation in the room's stream, read page by page, and no other room's", async () => {
    const stream = [created('t1'), deletion, ...Array.from({ length: 1200 }, () => updated('t2')), created('t2')];
    const reads: number[] = [];
    const history = {
      readStream: async (name: string, { fromRevision, maxCount }: { fromRevision: number; maxCount: number }) => {
        expect(name).toBe(STREAM);
        reads.push(fromRevision);
        return stream.slice(fromRevision, fromRevision + maxCount);
      },
    };
    expect(await roomDeletedShredsRoom.destroys(deletion, STREAM, history)).toEqual([
      { ids: [dataKeyIds.room('acme', 'r/1', 't1'), dataKeyIds.room('acme', 'r/1', 't2')] },
    ]);
    expect(reads).toEqual([0, 1000]);
    expect(await roomDeletedShredsRoom.destroys(deletion, 'room-acme.empty', { readStream: async () => [] })).toEqual([]);
  });
});
