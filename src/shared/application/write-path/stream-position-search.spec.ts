import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { RecordedEvent } from '../../domain/event';
import { ReadStreamOptions } from '../../ports/event-store.port';
import { firstEventAfterPosition, firstEventReaching, StreamReader } from './stream-position-search';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('the first event of a stream after a log position', () => {
  let dir: string;
  let store: SqliteEventStore;
  let reads = 0;
  const read: StreamReader = async (stream: string, options: ReadStreamOptions) => {
    reads++;
    return store.readStream(stream, options);
  };
  /** Every event of `long`, interleaved in the log with `other`'s (positions are not contiguous). */
  let long: RecordedEvent[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-position-search-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    for (let i = 0; i < 500; i++) {
      await store.append('long-acme.a', [{ type: i % 10 === 3 ? 'Skipped' : 'Counted', data: { i }, metadata: meta }], 'any');
      if (i % 3 === 0) await store.append('other-acme.b', [{ type: 'Counted', data: { i }, metadata: meta }], 'any');
    }
    long = await store.readStream('long-acme.a');
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds, for every position in the log, the first later event of the stream, in a logarithmic number of reads', async () => {
    const all = await store.readAll({ maxCount: 10_000 });
    for (const probe of all.filter((_, i) => i % 7 === 0)) {
      reads = 0;
      const found = await firstEventAfterPosition(read, 'long-acme.a', probe.position);
      expect(found?.id).toBe(long.find((e) => e.position > probe.position)?.id);
      expect(reads).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(long.length)));
    }
  });

  it('answers from the start before the first event and null after the last or for a missing stream', async () => {
    expect((await firstEventAfterPosition(read, 'long-acme.a', '0'))?.id).toBe(long[0].id);
    expect(await firstEventAfterPosition(read, 'long-acme.a', long[long.length - 1].position)).toBeNull();
    expect(await firstEventAfterPosition(read, 'missing-acme.x', '0')).toBeNull();
  });

  it('steps over the events the predicate skips', async () => {
    const counted = long.filter((e) => e.type === 'Counted');
    for (const target of [0, 3, 4, 13, 250, 493, 499]) {
      const found = await firstEventReaching(read, 'long-acme.a', long.length - 1, (e) =>
        e.type === 'Skipped' ? null : (e.data as { i: number }).i >= target,
      );
      expect(found?.id).toBe(counted.find((e) => (e.data as { i: number }).i >= target)?.id);
    }
    expect(await firstEventReaching(read, 'long-acme.a', long.length - 1, (e) => (e.type === 'Skipped' ? null : false))).toBeNull();
  });
});
