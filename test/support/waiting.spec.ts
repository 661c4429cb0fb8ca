import { eventually, holdsWithin, within } from './waiting';

/** The waits every spec shares: what they resolve with, and how they end when the awaited never comes. */
describe('waiting for a condition', () => {
  it('eventually resolves with the first value that is not undefined, null or false', async () => {
    const answers = [undefined, null, false, 0, 1];
    expect(await eventually(() => answers.shift(), { everyMs: 1 })).toBe(0);
    expect(await eventually(() => true)).toBe(true);
    expect(await eventually(async () => ({ found: 'it' }))).toEqual({ found: 'it' });
  });

  it('eventually rejects naming what it waited for once the time is up, after looking again until then', async () => {
    let looks = 0;
    const never = () => (looks++, false);
    await expect(eventually(never, { timeoutMs: 30, everyMs: 1, what: 'the sun in the west' })).rejects.toThrow(
      'the sun in the west: not within 30 ms',
    );
    expect(looks).toBeGreaterThan(1);
  });

  it('a probe that throws ends the wait with its own error', async () => {
    const probe = () => {
      throw new Error('the probe broke');
    };
    await expect(eventually(probe)).rejects.toThrow('the probe broke');
    await expect(holdsWithin(probe)).rejects.toThrow('the probe broke');
  });

  it('holdsWithin says whether the condition came to hold in time, and never rejects for the time', async () => {
    let calls = 0;
    expect(await holdsWithin(() => ++calls === 3, { everyMs: 1 })).toBe(true);
    expect(await holdsWithin(async () => false, { timeoutMs: 20, everyMs: 1 })).toBe(false);
  });

  it('within gives the promise\'s outcome, or rejects naming what once the time is up', async () => {
    expect(await within(Promise.resolve('done'), 1_000)).toBe('done');
    await expect(within(Promise.reject(new Error('its own')), 1_000)).rejects.toThrow('its own');
    await expect(within(new Promise(() => undefined), 20, 'the call hung')).rejects.toThrow('the call hung (after 20 ms)');
  });
});
