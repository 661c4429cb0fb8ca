/** A request counted in a fixed window: how many the window holds now, and when it ends. */
export interface WindowCount {
  /** Requests counted against the key in this window, this one included. */
  readonly count: number;
  /** When this window ends and the count starts again from zero (ms since the epoch). */
  readonly resetAtMs: number;
}

/** A token bucket: holds up to `capacity` tokens and refills `perSecond` tokens a second, continuously. */
export interface TokenBucket {
  readonly capacity: number;
  readonly perSecond: number;
}

/**
 * Rate-limit counters shared by every API process of a deployment, so a limit holds for the
 * deployment rather than per process. The embedded server is one process (it owns DATA_DIR),
 * so memory is exactly right there; separate API processes share MongoDB.
 *
 * Both operations are atomic per key: concurrent callers never lose a count or share a token.
 * Callers pass the time (`nowMs`), so every process of a deployment, and a test, uses one clock
 * per decision; forgetting a key (eviction, expiry) only ever errs towards allowing.
 */
export interface RateCounters {
  /**
   * Counts one request against `key` in the window of `windowMs` containing `nowMs`. Windows
   * are aligned on multiples of `windowMs` since the epoch, so every process agrees on them.
   */
  hit(key: string, windowMs: number, nowMs: number): Promise<WindowCount>;
  /** Takes one token from `key`'s bucket: 0 when taken, otherwise the ms until one is there. */
  take(key: string, bucket: TokenBucket, nowMs: number): Promise<number>;
  close(): Promise<void>;
}

export const RATE_COUNTERS = Symbol('RateCounters');

/** `key`'s window of `windowMs` containing `nowMs`: its name (key, length and start) and its end. */
export const windowOf = (key: string, windowMs: number, nowMs: number): { id: string; endMs: number } => {
  const startMs = Math.floor(nowMs / windowMs) * windowMs;
  return { id: `${key}@${windowMs}:${startMs}`, endMs: startMs + windowMs };
};

/**
 * One step of a token bucket, the arithmetic every adapter shares: refill for the time since
 * `at` (never backwards when clocks of two processes disagree), then take one token if whole.
 */
export function stepBucket(
  state: { tokens: number; atMs: number } | null,
  bucket: TokenBucket,
  nowMs: number,
): { tokens: number; atMs: number; waitMs: number } {
  const atMs = Math.max(state?.atMs ?? nowMs, nowMs);
  const elapsed = state ? Math.max(0, nowMs - state.atMs) : 0;
  const tokens = Math.min(bucket.capacity, (state?.tokens ?? bucket.capacity) + (elapsed / 1000) * bucket.perSecond);
  if (tokens >= 1) return { tokens: tokens - 1, atMs, waitMs: 0 };
  return { tokens, atMs, waitMs: Math.max(1, Math.ceil(((1 - tokens) / bucket.perSecond) * 1000)) };
}
