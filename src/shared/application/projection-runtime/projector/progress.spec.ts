import { FirstCatchUp, ProgressSignal } from './progress';

const at = (n: number) => String(n).padStart(20, '0');

describe('ProgressSignal', () => {
  it('tells each listener until it stops listening', () => {
    const signal = new ProgressSignal();
    const heard: string[] = [];
    const stopA = signal.listen(() => heard.push('a'));
    signal.listen(() => heard.push('b'));
    signal.notify();
    stopA();
    signal.notify();
    expect(heard).toEqual(['a', 'b', 'b']);
  });
});

describe('FirstCatchUp', () => {
  it('is reached once every position given is at the head noted at the first claim, and stays reached', async () => {
    const catchUp = new FirstCatchUp();
    await catchUp.noteHead(async () => at(5));
    await catchUp.noteHead(async () => at(9)); // the first head known holds
    let resolved = false;
    const waiting = catchUp.wait().then(() => (resolved = true));

    catchUp.check([at(5), at(4)]);
    catchUp.check([at(5), null]);
    await Promise.resolve();
    expect([catchUp.reached, resolved]).toEqual([false, false]);

    expect(catchUp.headReachedBy([at(5), at(6)])).toBe(true);
    catchUp.check([at(5), at(6)]);
    await waiting;
    expect(catchUp.reached).toBe(true);
    catchUp.check([null]);
    expect(catchUp.reached).toBe(true);
    await catchUp.wait();
  });

  it('on an empty log, is reached at once and reads the head again at the next claim until one exists', async () => {
    const catchUp = new FirstCatchUp();
    const reads: string[] = [];
    await catchUp.noteHead(async () => (reads.push('read'), null));
    expect(catchUp.headReachedBy([null])).toBe(true);
    await catchUp.noteHead(async () => (reads.push('read'), at(2)));
    expect(catchUp.headReachedBy([null])).toBe(false);
    expect(reads).toHaveLength(2);
    catchUp.check([]);
    expect(catchUp.reached).toBe(true);
  });
});
