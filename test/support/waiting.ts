/**
 * Waiting in tests: the one poll loop, the one timer race and the one pause every spec uses.
 * A test waits for a condition, never for a fixed time; the time limits here are generous
 * correctness bounds that end a test which would otherwise hang, never timing assertions.
 */

/** How long to keep looking, how often, and what for (named in the error when time is up). */
export interface Patience {
  /** Default 10 s. */
  readonly timeoutMs?: number;
  /** Default 20 ms. */
  readonly everyMs?: number;
  readonly what?: string;
}

/** Resolves after `ms`: to pace a poll or to let time pass between two writes, never as what makes a test pass. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A value `eventually` waits for: anything but undefined, null or false. */
type Found<T> = Exclude<T, undefined | null | false>;

/** The first value `probe` gives that is not undefined, null or false, or `undefined` once `timeoutMs` passed without one. */
async function poll<T>(probe: () => T | Promise<T>, timeoutMs: number, everyMs: number): Promise<{ value: Found<T> } | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return { value: value as Found<T> };
    if (Date.now() > deadline) return undefined;
    await sleep(everyMs);
  }
}

/**
 * Resolves with the first value `probe` gives that is not undefined, null or false (so a
 * condition resolves with `true`, a search with what it found), looking every `everyMs`;
 * rejects once `timeoutMs` has passed without one.
 */
export async function eventually<T>(probe: () => T | Promise<T>, patience: Patience = {}): Promise<Found<T>> {
  const { timeoutMs = 10_000, everyMs = 20, what = 'the awaited condition' } = patience;
  const found = await poll(probe, timeoutMs, everyMs);
  if (!found) throw new Error(`${what}: not within ${timeoutMs} ms`);
  return found.value;
}

/** Whether `condition` comes to hold within `timeoutMs` (false once it has not), for a test that asserts it did. */
export const holdsWithin = async (condition: () => boolean | Promise<boolean>, patience: Patience = {}): Promise<boolean> =>
  (await poll(condition, patience.timeoutMs ?? 10_000, patience.everyMs ?? 20)) !== undefined;

/** `promise`'s outcome, or a rejection naming `what` once `ms` have passed first. */
export async function within<T>(promise: Promise<T>, ms: number, what = 'timed out'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} (after ${ms} ms)`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
