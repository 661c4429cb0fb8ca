import { growingLru } from './growing-lru';

describe('growingLru', () => {
  it('keeps at most its entries, evicting the least recently used', () => {
    const cache = growingLru<string, number>(3);
    for (const [i, key] of ['a', 'b', 'c'].entries()) cache.set(key, i);
    cache.get('a');
    cache.set('d', 3);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(cache.size).toBe(3);
  });

  it('allocates nothing for entries it does not hold', () => {
    const before = process.memoryUsage().heapUsed;
    const caches = Array.from({ length: 20 }, () => growingLru<string, number>(100_000));
    // lru-cache with `max: 100_000` fills about 2.8 MB of arrays per cache at once: 56 MB for these.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(5 * 1024 * 1024);
    expect(caches).toHaveLength(20);
  });

  it('passes other options through (a time to live)', () => {
    let now = 1;
    const cache = growingLru<string, number>(10, { ttl: 1_000, ttlResolution: 0, perf: { now: () => now } });
    cache.set('a', 1);
    now = 2_000;
    expect(cache.get('a')).toBeUndefined();
  });
});
