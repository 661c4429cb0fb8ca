import { randomUUID } from 'node:crypto';
import { RateCounters } from '../../src/shared/ports/rate-counter.port';

/**
 * The behaviour every RateCounters adapter must share, bound per adapter by a one-line spec.
 * Keys carry a random prefix, so the suite also runs against a shared server. The time is
 * passed in, as callers do: no test waits for a clock.
 */
export function rateCounterContract(name: string, make: () => Promise<RateCounters>): void {
  describe(`RateCounters contract: ${name}`, () => {
    let counters: RateCounters;
    let prefix: string;
    const key = (rest: string) => `${prefix}:${rest}`;
    /** A time at the start of a 1 s window, far from the epoch like real clocks. */
    const T = 1_800_000_000_000;

    beforeEach(async () => {
      counters = await make();
      prefix = `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    });

    afterEach(() => counters.close());

    it('counts hits in a window aligned on its length, and starts again at one in the next', async () => {
      expect(await counters.hit(key('a'), 1_000, T)).toEqual({ count: 1, resetAtMs: T + 1_000 });
      expect(await counters.hit(key('a'), 1_000, T + 400)).toEqual({ count: 2, resetAtMs: T + 1_000 });
      expect(await counters.hit(key('a'), 1_000, T + 999)).toEqual({ count: 3, resetAtMs: T + 1_000 });
      expect(await counters.hit(key('a'), 1_000, T + 1_000)).toEqual({ count: 1, resetAtMs: T + 2_000 });
      expect(await counters.hit(key('a'), 60_000, T + 30_000)).toEqual({ count: 1, resetAtMs: Math.ceil((T + 30_001) / 60_000) * 60_000 });
    });

    it('keeps one count per key', async () => {
      await counters.hit(key('a'), 1_000, T);
      await counters.hit(key('a'), 1_000, T);
      expect((await counters.hit(key('b'), 1_000, T)).count).toBe(1);
      expect((await counters.hit(key('a'), 1_000, T)).count).toBe(3);
    });

    it('never loses or repeats a count under concurrent hits', async () => {
      const counts = await Promise.all(Array.from({ length: 40 }, () => counters.hit(key('busy'), 10_000, T)));
      expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    });

    it('lets a full bucket through, refuses the next with the wait for one token, and refills continuously', async () => {
      const bucket = { capacity: 100, perSecond: 100 };
      for (let i = 0; i < 100; i++) expect(await counters.take(key('b'), bucket, T)).toBe(0);
      expect(await counters.take(key('b'), bucket, T)).toBe(10);
      expect(await counters.take(key('b'), bucket, T + 5)).toBe(5); // half a token back: still refused
      expect(await counters.take(key('b'), bucket, T + 10)).toBe(0); // 10 ms refill one token
      expect(await counters.take(key('b'), bucket, T + 10)).toBe(10);
      for (let i = 0; i < 100; i++) expect(await counters.take(key('b'), bucket, T + 1_010)).toBe(0); // full again
      expect(await counters.take(key('b'), bucket, T + 1_010)).toBeGreaterThan(0);
    });

    it('keeps one bucket per key', async () => {
      const bucket = { capacity: 2, perSecond: 2 };
      expect([await counters.take(key('x'), bucket, T), await counters.take(key('x'), bucket, T), await counters.take(key('x'), bucket, T)]).toEqual([0, 0, 500]);
      expect([await counters.take(key('y'), bucket, T), await counters.take(key('y'), bucket, T)]).toEqual([0, 0]);
    });

    it('hands out each token once under concurrent takes', async () => {
      const waits = await Promise.all(Array.from({ length: 30 }, () => counters.take(key('race'), { capacity: 10, perSecond: 1 }, T)));
      expect(waits.filter((w) => w === 0)).toHaveLength(10);
    });

    it('hands out each token once to many more concurrent callers than tokens, turning none away for contention', async () => {
      const waits = await Promise.all(Array.from({ length: 200 }, () => counters.take(key('burst'), { capacity: 50, perSecond: 1 }, T)));
      expect(waits.filter((w) => w === 0)).toHaveLength(50);
      expect(waits.filter((w) => w > 0)).toHaveLength(150);
    });

    it('gives nothing back when a caller reads an earlier time than the last (clocks of two processes)', async () => {
      const bucket = { capacity: 1, perSecond: 1 };
      expect(await counters.take(key('skew'), bucket, T + 500)).toBe(0);
      expect(await counters.take(key('skew'), bucket, T)).toBe(1_000);
      expect(await counters.take(key('skew'), bucket, T + 1_500)).toBe(0);
    });
  });
}
