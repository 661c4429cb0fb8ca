import { fold } from '../../../shared/domain/decider';
import { recorded } from '../../../../projections/testing';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { cursorDecider, CursorCommand, cursorSetOf, cursorStream, legacyCursorStream, RoomCursor } from './cursor.decider';
import { CursorEvent } from './cursor.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const ann = '2025-12-01T00:00:00.000Z';
const room = '2025-12-02T00:00:00.000Z';
const reborn = '2026-02-01T00:00:00.000Z';
const set = (position: number, updated_at = now, user_created_at = ann, room_created_at = room) =>
  ({
    type: 'ReadCursorSet',
    data: { room_id: 'r1', user_id: 'ann', position, user_created_at, room_created_at, updated_at },
  }) satisfies CursorEvent;
const command = (position: number, user_created_at = ann, room_created_at = room, legacy: RoomCursor | null = null): CursorCommand => ({
  type: 'SetReadCursor',
  room_id: 'r1',
  user_id: 'ann',
  position,
  user_created_at,
  room_created_at,
  legacy,
  now: later,
});
const given = deciderSpecification(cursorDecider);
const legacyAt = (position: number, userCreatedAt = ann, roomCreatedAt = room): RoomCursor => ({ position, userCreatedAt, roomCreatedAt });

describe('cursor decider', () => {
  it('names one stream per user and room, unambiguous whatever the ids hold', () => {
    expect(cursorStream('acme', 'ann.b', 'r1')).toBe('readcursor-acme.["ann.b","r1"]');
    expect(cursorStream('acme', 'a', 'b.c')).not.toBe(cursorStream('acme', 'a.b', 'c'));
    expect(legacyCursorStream('acme', 'ann.b')).toBe('cursor-acme.ann.b');
  });

  it('sets a first cursor, position 0 included', () => {
    given().when(command(0)).then([set(0, later)]);
  });

  it('moves a cursor forward', () => {
    given(set(5)).when(command(6)).then([set(6, later)]);
  });

  it('decides nothing for a position at or below the current one', () => {
    given(set(5)).when(command(5)).thenNothingHappened();
    given(set(5), set(9)).when(command(7)).thenNothingHappened();
  });

  it('keeps the newest set alone as its state', () => {
    expect(fold(cursorDecider, [set(5), set(9)])).toEqual(legacyAt(9));
  });

  it('starts from the legacy stream\'s cursor until the room\'s stream has one', () => {
    given().when(command(7, ann, room, legacyAt(9))).thenNothingHappened();
    given().when(command(10, ann, room, legacyAt(9))).then([set(10, later)]);
    given(set(12)).when(command(11, ann, room, legacyAt(9))).thenNothingHappened();
  });

  it('starts afresh for a re-created user or room of the same id', () => {
    given(set(50)).when(command(3, reborn)).then([set(3, later, reborn)]);
    given(set(50)).when(command(3, ann, reborn)).then([set(3, later, ann, reborn)]);
    given().when(command(3, reborn, room, legacyAt(50))).then([set(3, later, reborn)]);
    given(set(3, later, ann, reborn)).when(command(2, ann, reborn)).thenNothingHappened();
  });

  it('reads whose cursor a set moved from either stream kind', () => {
    const { data } = set(4);
    expect(cursorSetOf(recorded(cursorStream('acme', 'ann', 'r1'), 'ReadCursorSet', data))).toMatchObject({ instanceId: 'acme', userId: 'ann', roomId: 'r1' });
    const { user_id: _, ...legacyData } = data;
    expect(cursorSetOf(recorded(legacyCursorStream('acme', 'ann.b'), 'ReadCursorSet', legacyData))).toMatchObject({ instanceId: 'acme', userId: 'ann.b', roomId: 'r1' });
    expect(cursorSetOf(recorded('user-acme.ann', 'ReadCursorSet', data))).toBeNull();
  });
});
