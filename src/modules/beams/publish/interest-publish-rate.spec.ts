import { InterestPublishRate } from './interest-publish-rate';

describe('InterestPublishRate (token bucket per instance)', () => {
  it('lets 100 publishes through in a second, refuses the 101st with a wait, and refills with time', () => {
    const rate = new InterestPublishRate(100);
    for (let i = 0; i < 100; i++) expect(rate.take('acme', 1_000)).toBe(0);
    expect(rate.take('acme', 1_000)).toBe(1);
    expect(rate.take('acme', 1_005)).toBe(1); // half a token back: still refused
    expect(rate.take('acme', 1_010)).toBe(0); // 10 ms refill one token
    expect(rate.take('acme', 1_010)).toBe(1);
    expect(rate.take('acme', 2_010)).toBe(0); // a second later the bucket is full again
    for (let i = 0; i < 99; i++) expect(rate.take('acme', 2_010)).toBe(0);
    expect(rate.take('acme', 2_010)).toBe(1);
  });

  it('keeps one bucket per instance', () => {
    const rate = new InterestPublishRate(2);
    expect([rate.take('a', 0), rate.take('a', 0), rate.take('a', 0)]).toEqual([0, 0, 1]);
    expect([rate.take('b', 0), rate.take('b', 0)]).toEqual([0, 0]);
  });
});
