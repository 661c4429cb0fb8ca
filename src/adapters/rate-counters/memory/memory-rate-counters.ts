import { growingLru } from '../../../shared/growing-lru';
import { RateCounters, stepBucket, TokenBucket, WindowCount, windowOf } from '../../../shared/ports/rate-counter.port';

/** Keys remembered; one forgotten starts again at zero (or a full bucket), which only errs towards allowing. */
const KEYS = 100_000;

/**
 * Counters in this process's memory: exactly right for the embedded server, which is the only
 * process serving its deployment (it holds the DATA_DIR lock). Node runs each call to the end
 * before the next, so every operation is atomic.
 */
export class MemoryRateCounters implements RateCounters {
  private readonly windows = growingLru<string, { count: number; endMs: number }>(KEYS);
  private readonly buckets = growingLru<string, { tokens: number; atMs: number }>(KEYS);

  async hit(key: string, windowMs: number, nowMs: number): Promise<WindowCount> {
    const { id, endMs } = windowOf(key, windowMs, nowMs);
    const window = this.windows.get(id) ?? { count: 0, endMs };
    window.count += 1;
    this.windows.set(id, window);
    return { count: window.count, resetAtMs: endMs };
  }

  async take(key: string, bucket: TokenBucket, nowMs: number): Promise<number> {
    const { tokens, atMs, waitMs } = stepBucket(this.buckets.get(key) ?? null, bucket, nowMs);
    this.buckets.set(key, { tokens, atMs });
    return waitMs;
  }

  async close(): Promise<void> {
    this.windows.clear();
    this.buckets.clear();
  }
}
