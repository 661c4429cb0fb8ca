import { fold } from '../../../shared/domain/decider';
import { cursorDecider, CursorCommand, cursorStream } from './cursor.decider';
import { CursorEvent } from './cursor.events';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const ann = '2025-12-01T00:00:00.000Z';
const given = (...events: CursorEvent[]) => ({
  when: (command: CursorCommand) => cursorDecider.decide(command, fold(cursorDecider, events)),
});
const set = (room_id: string, position: number, user_created_at = ann, updated_at = now): CursorEvent => ({
  type: 'ReadCursorSet',
  data: { room_id, position, user_created_at, updated_at },
});
const command = (room_id: string, position: number, user_created_at = ann): CursorCommand => ({
  type: 'SetReadCursor',
  room_id,
  position,
  user_created_at,
  now: later,
});

describe('cursor decider', () => {
  it('names one stream per user', () => {
    expect(cursorStream('acme', 'ann.b')).toBe('cursor-acme.ann.b');
  });

  it('sets a first cursor, position 0 included', () => {
    expect(given().when(command('r1', 0))).toEqual([set('r1', 0, ann, later)]);
  });

  it('moves a cursor forward', () => {
    expect(given(set('r1', 5)).when(command('r1', 6))).toEqual([set('r1', 6, ann, later)]);
  });

  it('decides nothing for a position at or below the current one', () => {
    expect(given(set('r1', 5)).when(command('r1', 5))).toEqual([]);
    expect(given(set('r1', 5), set('r1', 9)).when(command('r1', 7))).toEqual([]);
  });

  it('keeps each room apart', () => {
    expect(given(set('r1', 50)).when(command('r2', 3))).toEqual([set('r2', 3, ann, later)]);
    expect(fold(cursorDecider, [set('r1', 50), set('r2', 3)]).positions).toEqual(
      new Map([
        ['r1', 50],
        ['r2', 3],
      ]),
    );
  });

  it('starts afresh for a re-created user of the same id', () => {
    const reborn = '2026-02-01T00:00:00.000Z';
    expect(given(set('r1', 50)).when(command('r1', 3, reborn))).toEqual([set('r1', 3, reborn, later)]);
    const state = fold(cursorDecider, [set('r1', 50), set('r2', 9), set('r1', 3, reborn)]);
    expect(state).toEqual({ userCreatedAt: reborn, positions: new Map([['r1', 3]]) });
  });
});
