import { newEventId } from './event-store.port';
import { sleep } from '../../../test/support/waiting';

describe('newEventId', () => {
  it('is a version 7 UUID whose ids grow with time (they land at the end of the log\'s index on them)', async () => {
    const first = newEventId();
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Its first 48 bits are the time it was made, in milliseconds.
    const made = parseInt(first.replace(/-/g, '').slice(0, 12), 16);
    expect(Math.abs(made - Date.now())).toBeLessThan(1000);
    await sleep(5);
    const later = newEventId();
    expect(later > first).toBe(true);
  });

  it('is unique within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newEventId());
    expect(new Set(ids).size).toBe(ids.length);
  });
});
