import { fold } from '../../../shared/domain/decider';
import { cursorDecider, CursorCommand, cursorStream } from './cursor.decider';
import { CursorEvent } from './cursor.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const ann = '2025-12-01T00:00:00.000Z';
const room = '2025-12-02T00:00:00.000Z';
const reborn = '2026-02-01T00:00:00.000Z';
const given = (...events: CursorEvent[]) => ({
  when: (command: CursorCommand) => cursorDecider.decide(command, fold(cursorDecider, events)),
});
const set = (room_id: string, position: number, updated_at = now, user_created_at = ann, room_created_at = room) =>
  ({
    type: 'ReadCursorSet',
    data: { room_id, position, user_created_at, room_created_at, updated_at },
  }) satisfies CursorEvent;
const command = (room_id: string, position: number, user_created_at = ann, room_created_at = room): CursorCommand => ({
  type: 'SetReadCursor',
  room_id,
  position,
  user_created_at,
  room_created_at,
  now: later,
});
const positions = (events: CursorEvent[]) =>
  Object.fromEntries([...fold(cursorDecider, events).cursors].map(([id, c]) => [id, c.position]));

describe('cursor decider', () => {
  it('names one stream per user', () => {
    expect(cursorStream('acme', 'ann.b')).toBe('cursor-acme.ann.b');
  });

  it('sets a first cursor, position 0 included', () => {
    expect(given().when(command('r1', 0))).toEqual([set('r1', 0, later)]);
  });

  it('moves a cursor forward', () => {
    expect(given(set('r1', 5)).when(command('r1', 6))).toEqual([set('r1', 6, later)]);
  });

  it('decides nothing for a position at or below the current one', () => {
    expect(given(set('r1', 5)).when(command('r1', 5))).toEqual([]);
    expect(given(set('r1', 5), set('r1', 9)).when(command('r1', 7))).toEqual([]);
  });

  it('keeps each room apart', () => {
    expect(given(set('r1', 50)).when(command('r2', 3))).toEqual([set('r2', 3, later)]);
    expect(positions([set('r1', 50), set('r2', 3)])).toEqual({ r1: 50, r2: 3 });
  });

  it('starts afresh for a re-created user of the same id', () => {
    expect(given(set('r1', 50)).when(command('r1', 3, reborn))).toEqual([set('r1', 3, later, reborn)]);
    const events = [set('r1', 50), set('r2', 9), set('r1', 3, later, reborn)];
    expect(fold(cursorDecider, events).userCreatedAt).toBe(reborn);
    expect(positions(events)).toEqual({ r1: 3 });
  });

  it('starts afresh in a re-created room of the same id, leaving the other rooms', () => {
    expect(given(set('r1', 50)).when(command('r1', 3, ann, reborn))).toEqual([set('r1', 3, later, ann, reborn)]);
    const events = [set('r1', 50), set('r2', 9), set('r1', 3, later, ann, reborn)];
    expect(positions(events)).toEqual({ r1: 3, r2: 9 });
    expect(given(...events).when(command('r1', 2, ann, reborn))).toEqual([]);
  });
});
