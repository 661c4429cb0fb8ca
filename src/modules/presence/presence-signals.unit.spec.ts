import { isPresenceSignal, OtherHolders } from './presence-signals';

const TTL = 25_000;
const GRACE = 6_000;

describe('presence signals', () => {
  it('are objects naming the sending process and the user; anything else on the channel is ignored', () => {
    expect(isPresenceSignal({ process_id: 'A', user_id: 'bob', online: true })).toBe(true);
    expect(isPresenceSignal({ process_id: 'A', user_id: 'bob', query: true })).toBe(true);
    expect(isPresenceSignal({ process_id: 'A' })).toBe(false);
    expect(isPresenceSignal({ process_id: 7, user_id: 'bob' })).toBe(false);
    expect(isPresenceSignal('online')).toBe(false);
    expect(isPresenceSignal(null)).toBe(false);
  });
});

describe('the other processes holding a user online', () => {
  it('hold them for the TTL after each "online", and no longer once the word is not repeated', () => {
    const others = new OtherHolders(TTL, GRACE);
    expect(others.hear({ process_id: 'A', user_id: 'bob', online: true }, 0)).toBe(true);
    expect(others.countAt(TTL - 1)).toBe(1);
    others.hear({ process_id: 'A', user_id: 'bob', online: true }, 10_000); // a heartbeat
    expect(others.countAt(10_000 + TTL - 1)).toBe(1);
    expect(others.countAt(10_000 + TTL)).toBe(0);
    expect(others.isEmpty).toBe(true);
  });

  it('let go at once on "offline", each process on its own word', () => {
    const others = new OtherHolders(TTL, GRACE);
    others.hear({ process_id: 'A', user_id: 'bob', online: true }, 0);
    others.hear({ process_id: 'B', user_id: 'bob', online: true }, 0);
    others.hear({ process_id: 'A', user_id: 'bob', online: false }, 1_000);
    expect(others.countAt(1_000)).toBe(1);
    others.hear({ process_id: 'B', user_id: 'bob', online: false }, 2_000);
    expect(others.countAt(2_000)).toBe(0);
  });

  it('hold the users of a draining process for the grace only, while they reconnect elsewhere', () => {
    const others = new OtherHolders(TTL, GRACE);
    others.hear({ process_id: 'A', user_id: 'bob', online: true }, 0);
    others.hear({ process_id: 'A', user_id: 'bob', online: false, stopping: true }, 1_000);
    expect(others.countAt(1_000 + GRACE - 1)).toBe(1);
    expect(others.countAt(1_000 + GRACE)).toBe(0);
    // A grace longer than the TTL is cut to the TTL.
    const short = new OtherHolders(5_000, GRACE);
    short.hear({ process_id: 'A', user_id: 'bob', online: false, stopping: true }, 0);
    expect(short.countAt(4_999)).toBe(1);
    expect(short.countAt(5_000)).toBe(0);
  });

  it('take a query as no word on the user', () => {
    const others = new OtherHolders(TTL, GRACE);
    expect(others.hear({ process_id: 'A', user_id: 'bob', query: true }, 0)).toBe(false);
    expect(others.countAt(0)).toBe(0);
  });
});
