import { randomFromPool } from './random-pool';

describe('randomFromPool', () => {
  it('hands out the requested number of bytes, never the same bytes twice across refills', () => {
    const seen = new Set<string>();
    // More than one pool's worth (16 KiB) of 12-byte draws: the refill is crossed.
    for (let i = 0; i < 3_000; i++) {
      const bytes = randomFromPool(12);
      expect(bytes).toHaveLength(12);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(3_000);
  });

  it('answers a request larger than the pool with fresh bytes of that size', () => {
    expect(randomFromPool(40_000)).toHaveLength(40_000);
  });
});
