import { RateCounters } from '../../../shared/ports/rate-counter.port';

/** Publishes to interests an instance may make per second (seed, Limits). */
export const INTEREST_PUBLISHES_PER_SECOND = 100;

/**
 * A token bucket per instance: it holds up to one second's worth of publishes and refills
 * continuously, so a burst of 100 passes and the 101st within the same second waits. The
 * bucket lives in the deployment's rate counters, so every API process takes from the same one.
 */
export class InterestPublishRate {
  private readonly bucket;

  constructor(
    private readonly counters: RateCounters,
    perSecond = INTEREST_PUBLISHES_PER_SECOND,
  ) {
    this.bucket = { capacity: perSecond, perSecond };
  }

  /** Takes a token: 0 when the publish may go ahead, otherwise the whole seconds to wait (for Retry-After). */
  async take(instanceId: string, nowMs: number): Promise<number> {
    const waitMs = await this.counters.take(`beams-interests:${instanceId}`, this.bucket, nowMs);
    return waitMs === 0 ? 0 : Math.ceil(waitMs / 1000);
  }
}
