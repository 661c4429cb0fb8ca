import { EventLoopTurn } from './event-loop-turn';

describe('EventLoopTurn', () => {
  it('is the same turn until the event loop turns, then a new one', async () => {
    const turn = new EventLoopTurn();
    const first = turn.current();
    await Promise.resolve();
    expect(turn.current()).toBe(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(turn.current()).not.toBe(first);
  });

  it('ends at once when told to (an append was made)', () => {
    const turn = new EventLoopTurn();
    const first = turn.current();
    turn.end();
    expect(turn.current()).not.toBe(first);
  });

  it('asks its scheduler for its end once per turn, and lasts until then', () => {
    const ends: (() => void)[] = [];
    const turn = new EventLoopTurn((end) => void ends.push(end));
    const first = turn.current();
    expect(turn.current()).toBe(first);
    expect(ends).toHaveLength(1);
    ends.splice(0).forEach((end) => end());
    const second = turn.current();
    expect(second).not.toBe(first);
    expect(ends).toHaveLength(1);
  });
});
