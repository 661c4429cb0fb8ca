import { MODERATOR, visibleTo } from './message-visibility';

describe('visibleTo: who may see a message where', () => {
  const plain = { user_id: 'ann' };
  const threadOnly = { user_id: 'ann', parent_id: 1 };
  const alsoInRoom = { user_id: 'ann', parent_id: 1, also_in_room: true as const };
  const shadowed = (m: object) => ({ ...m, shadow: true as const });

  it('shows a message in its room, a reply in its thread and in its room only when also_in_room', () => {
    expect([visibleTo(plain, 'room', undefined), visibleTo(plain, 'thread', undefined)]).toEqual([true, false]);
    expect([visibleTo(threadOnly, 'room', undefined), visibleTo(threadOnly, 'thread', undefined)]).toEqual([false, true]);
    expect([visibleTo(alsoInRoom, 'room', undefined), visibleTo(alsoInRoom, 'thread', undefined)]).toEqual([true, true]);
  });

  it('shows what was sent under a shadow ban to its sender alone, wherever it shows', () => {
    for (const m of [plain, threadOnly, alsoInRoom].map(shadowed)) {
      for (const place of ['room', 'thread'] as const) {
        expect(visibleTo(m, place, 'ann')).toBe(visibleTo({ ...m, shadow: undefined }, place, undefined));
        expect(visibleTo(m, place, 'ben')).toBe(false);
        expect(visibleTo(m, place, undefined)).toBe(false);
      }
    }
  });

  it('shows what was sent under a shadow ban to the moderators who judge it, where its sender sees it', () => {
    for (const m of [plain, threadOnly, alsoInRoom]) {
      for (const place of ['room', 'thread'] as const) {
        expect(visibleTo(shadowed(m), place, MODERATOR)).toBe(visibleTo(m, place, undefined));
        expect(visibleTo(m, place, MODERATOR)).toBe(visibleTo(m, place, undefined));
      }
    }
  });
});
