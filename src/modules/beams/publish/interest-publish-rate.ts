import { LRUCache } from 'lru-cache';

/** Publishes to interests an instance may make per second (seed, Limits). */
export const INTEREST_PUBLISHES_PER_SECOND = 100;
/** Instances whose buckets are remembered; one forgotten starts again full, which only errs towards allowing. */
const BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per instance: it holds up to one second's worth of publishes and refills
 * continuously, so a burst of 100 passes and the 101st within the same second waits.
 * In-process: each API process keeps its own buckets (see README, Beams publish API).
 */
export class InterestPublishRate {
  private readonly buckets = new LRUCache<string, Bucket>({ max: BUCKETS });

  constructor(private readonly perSecond = INTEREST_PUBLISHES_PER_SECOND) {}

  /** Takes a token: 0 when the publish may go ahead, otherwise the seconds to wait (for Retry-After). */
  take(instanceId: string, nowMs: number): number {
    const bucket = this.buckets.get(instanceId) ?? { tokens: this.perSecond, at: nowMs };
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((nowMs - bucket.at) / 1000) * this.perSecond);
    bucket.at = nowMs;
    this.buckets.set(instanceId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
  }
}
