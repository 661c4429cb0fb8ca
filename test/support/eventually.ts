/** How long to keep looking, how often, and what for (named in the error when time is up). */
export interface Patience {
  /** Default 10 s. */
  readonly timeoutMs?: number;
  /** Default 20 ms. */
  readonly everyMs?: number;
  readonly what?: string;
}

/** Waits until `condition` holds, looking every `everyMs`; rejects once `timeoutMs` has passed without it. */
export async function eventually(condition: () => boolean | Promise<boolean>, patience: Patience = {}): Promise<void> {
  const { timeoutMs = 10_000, everyMs = 20, what = 'the awaited condition' } = patience;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
