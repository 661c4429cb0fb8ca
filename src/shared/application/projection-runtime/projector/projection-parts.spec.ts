import { byInstance, byRoom } from '../../../../../projections/partitioning';
import { messagesProjection } from '../../../../../projections/messages/messages.projection';
import { usersProjection } from '../../../../../projections/users/users.projection';
import type { RecordedEvent } from '../../../domain/event';
import { everyLayoutCheckpoint, layoutResumePosition, partCheckpoint, partitionOf, projectionOfPart, projectionParts, splitProjections } from './projection-parts';

const at = (n: number) => String(n).padStart(20, '0');
const event = (streamName: string, type: string, data: unknown = {}): RecordedEvent =>
  ({ id: 'e', streamName, revision: 0, position: at(1), recordedAt: '2026-01-01T00:00:00.000Z', type, data, metadata: {} }) as RecordedEvent;

describe('projection parts (PROJECTOR_PARTITIONS)', () => {
  it('keeps a projection whole under one partition, and one that declares no partitioning whole under any', () => {
    expect(projectionParts([messagesProjection, usersProjection]).map((p) => p.checkpoint)).toEqual(['messages_v1', 'users_v1']);
    expect(projectionParts([messagesProjection, usersProjection], 3).map((p) => p.checkpoint)).toEqual([
      'messages_v1#0/3',
      'messages_v1#1/3',
      'messages_v1#2/3',
      'users_v1',
    ]);
    expect(splitProjections([messagesProjection, usersProjection], 2)).toEqual(new Map([['messages_v1', ['messages_v1#0/2', 'messages_v1#1/2']]]));
    expect(projectionOfPart('messages_v1#1/3')).toBe('messages_v1');
    expect(projectionOfPart('messages_v1')).toBe('messages_v1');
    expect(() => projectionParts([messagesProjection], 17)).toThrow(/PROJECTOR_PARTITIONS/);
  });

  it('puts each event in the partition of its room, whichever stream carries it, and a room-less one in every partition', () => {
    const parts = projectionParts([messagesProjection], 4);
    const owner = (e: RecordedEvent) => parts.filter((p) => p.share(e) === 'mine').map((p) => p.index);
    const sent = event('messages-acme.r1', 'MessageSent', { id: 1 });
    const edited = event('message-acme.1', 'MessageEdited', { id: 1, room_id: 'r1' });
    const roomDeleted = event('room-acme.r1', 'RoomDeleted');
    expect(owner(sent)).toHaveLength(1);
    expect(owner(edited)).toEqual(owner(sent));
    expect(owner(roomDeleted)).toEqual(owner(sent));
    const wiped = event('instance-acme', 'InstanceWiped');
    expect(parts.map((p) => p.share(wiped))).toEqual(['shared', 'shared', 'shared', 'shared']);
    // A document belongs to the partition of the events of its room.
    const document = { _id: 'x', instance_id: 'acme', room_id: 'r1' };
    expect(parts.filter((p) => p.ownsDocument(document)).map((p) => p.index)).toEqual(owner(sent));
    // Rooms spread over the partitions.
    const rooms = Array.from({ length: 200 }, (_, i) => byRoom.event(event(`messages-acme.room-${i}`, 'MessageSent'))!);
    const counts = [0, 1, 2, 3].map((k) => rooms.filter((key) => partitionOf(key, 4) === k).length);
    for (const count of counts) expect(count).toBeGreaterThan(25);
    expect(byInstance.event(sent)).toBe('acme');
  });

  it('is stable: the same key falls in the same partition in every process and release', () => {
    // FNV-1a: the empty key is its offset basis, "a" hashes to 0xe40c292c.
    expect(partitionOf('', 1_000_000)).toBe(0x811c9dc5 % 1_000_000);
    expect(partitionOf('a', 1_000_000)).toBe(0xe40c292c % 1_000_000);
  });

  it('resumes a changed partition count where the most advanced complete earlier layout stood, least advanced part first', () => {
    expect(everyLayoutCheckpoint('m_v1')).toHaveLength(1 + (2 + 16) * 15 / 2);
    expect(layoutResumePosition('m_v1', new Map())).toBeNull();
    expect(layoutResumePosition('m_v1', new Map([['m_v1', at(5)]]))).toBe(at(5));
    const four = [at(9), at(7), at(8), at(9)].map((p, i) => [partCheckpoint('m_v1', i, 4), p] as const);
    expect(layoutResumePosition('m_v1', new Map([['m_v1', at(5)], ...four]))).toBe(at(7));
    // An incomplete layout (a part never written) is not one to resume from.
    expect(layoutResumePosition('m_v1', new Map([['m_v1', at(5)], ...four.slice(1)]))).toBe(at(5));
  });
});
