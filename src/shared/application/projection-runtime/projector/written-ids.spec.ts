import { StartedEmpty, WrittenIds } from './written-ids';

describe('WrittenIds (a Bloom filter of the document ids a pass wrote)', () => {
  it('never forgets an id it was given, and rarely claims one it was not', () => {
    const ids = new WrittenIds();
    for (let i = 0; i < 10_000; i++) ids.add('users_v1', JSON.stringify(['acme', `user-${i}`]));
    let forgotten = 0;
    for (let i = 0; i < 10_000; i++) if (!ids.mayHold('users_v1', JSON.stringify(['acme', `user-${i}`]))) forgotten++;
    expect(forgotten).toBe(0);

    let falsePositives = 0;
    for (let i = 0; i < 20_000; i++) if (ids.mayHold('users_v1', JSON.stringify(['acme', `other-${i}`]))) falsePositives++;
    expect(falsePositives).toBeLessThan(5); // about 1 in 200 million expected at this fill
  });

  it('keeps collections apart, even where collection and id run together alike', () => {
    const ids = new WrittenIds();
    ids.add('rooms_v1', 'abc');
    expect(ids.mayHold('rooms_v1', 'abc')).toBe(true);
    expect(ids.mayHold('users_v1', 'abc')).toBe(false);
    expect(ids.mayHold('rooms_v1a', 'bc')).toBe(false);
    expect(ids.mayHold('rooms_v', '1abc')).toBe(false);
  });
});

describe('StartedEmpty', () => {
  it('says a document is certainly absent only in a collection that started empty, until its id is written', () => {
    const fresh = new StartedEmpty(['users_v2']);
    expect(fresh.certainlyAbsent('users_v2', 'ann')).toBe(true);
    expect(fresh.certainlyAbsent('users_v1', 'ann')).toBe(false);

    fresh.noteWritten('users_v2', 'ann');
    fresh.noteWritten('users_v1', 'bob');
    expect(fresh.certainlyAbsent('users_v2', 'ann')).toBe(false);
    expect(fresh.certainlyAbsent('users_v2', 'bob')).toBe(true);
  });

  it('with no collection started empty, knows nothing absent', () => {
    const none = new StartedEmpty();
    none.noteWritten('users_v1', 'ann');
    expect(none.certainlyAbsent('users_v1', 'bob')).toBe(false);
  });
});
