import { MemoryRateCounters } from '../../../adapters/rate-counters/memory/memory-rate-counters';
import { InterestPublishRate } from './interest-publish-rate';

describe('InterestPublishRate (token bucket per instance, on the rate counters)', () => {
  it('lets 100 publishes through in a second, refuses the 101st with a wait in whole seconds, and refills with time', async () => {
    const rate = new InterestPublishRate(new MemoryRateCounters(), 100);
    for (let i = 0; i < 100; i++) expect(await rate.take('acme', 1_000)).toBe(0);
    expect(await rate.take('acme', 1_000)).toBe(1);
    expect(await rate.take('acme', 1_005)).toBe(1); // half a token back: still refused
    expect(await rate.take('acme', 1_010)).toBe(0); // 10 ms refill one token
    expect(await rate.take('acme', 1_010)).toBe(1);
    expect(await rate.take('acme', 2_010)).toBe(0); // a second later the bucket is full again
    for (let i = 0; i < 99; i++) expect(await rate.take('acme', 2_010)).toBe(0);
    expect(await rate.take('acme', 2_010)).toBe(1);
  });

  it('keeps one bucket per instance, shared by every user of the same counters (every API process)', async () => {
    const counters = new MemoryRateCounters();
    const one = new InterestPublishRate(counters, 2);
    const other = new InterestPublishRate(counters, 2);
    expect([await one.take('a', 0), await other.take('a', 0), await one.take('a', 0)]).toEqual([0, 0, 1]);
    expect([await other.take('b', 0), await one.take('b', 0)]).toEqual([0, 0]);
  });
});
