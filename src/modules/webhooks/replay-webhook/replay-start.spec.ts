import { LogPosition } from '../../../shared/domain/event';
import { CountingStore } from '../../../../test/support/counting-event-store';
import { withOverrides } from '../../../../test/support/event-store-overrides';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { replayStartAt } from './replay-start';

/** Events in the log: enough that a scan reads many pages and a search a few events. */
const EVENTS = 12_000;
const START = Date.parse('2026-03-01T00:00:00.000Z');
/** Event i was recorded at START + i seconds; every third one is a webhook-carrying type. */
const recordedAt = (i: number) => new Date(START + i * 1000).toISOString();

/**
 * Where a webhook replay "from a time" starts, on a real SQLite log: the store's binary search
 * over positions finds the same start a scan of the log does (the replay delivers the same
 * events), without a single read of the whole log.
 */
describe('replayStartAt (a webhook replay from a time)', () => {
  let stores: SqliteStores;
  const positions: LogPosition[] = [];

  beforeAll(async () => {
    stores = openSqliteStores('parley-replay-start-');
    for (let i = 0; i < EVENTS; i += 500) {
      const batch = Array.from({ length: 500 }, (_, j) => ({
        type: (i + j) % 3 === 0 ? 'MessageSent' : 'CursorSet',
        data: { n: i + j },
        metadata: { occurred_at: recordedAt(i + j) },
        recordedAt: recordedAt(i + j),
      }));
      const { position } = await stores.events.append(`messages-replay.room-${i}`, batch, 'any');
      const last = Number(position);
      for (let k = batch.length - 1; k >= 0; k--) positions.push(String(last - k).padStart(position.length, '0'));
    }
  }, 60_000);
  afterAll(() => stores?.close());

  /** The scan's answer, where the store cannot search by time. */
  const scanned = (time: string) => replayStartAt(withOverrides(stores.events, { positionBeforeTime: undefined }), time);
  /** What a replay from `after` delivers: the webhook-carrying events after it. */
  const carriedAfter = (after: LogPosition | null) => positions.filter((p, i) => (after === null || p > after) && i % 3 === 0);

  it('finds the position before the first event recorded at or after the time, reading no page of the log', async () => {
    const counting = new CountingStore(stores.events);
    const cases: [string, LogPosition | null][] = [
      [recordedAt(-5), null], // before the log: from its start
      [recordedAt(0), null],
      [recordedAt(1), positions[0]],
      [recordedAt(7_777), positions[7_776]],
      [new Date(START + 7_777_500).toISOString(), positions[7_777]], // between two events
      [recordedAt(EVENTS - 1), positions[EVENTS - 2]],
      [recordedAt(EVENTS + 10), positions[EVENTS - 1]], // after every event: only what comes next
    ];
    for (const [time, expected] of cases) {
      const start = await replayStartAt(counting.events, time);
      expect([time, start]).toEqual([time, expected]);
      // The scan starts after the last carried event before the time: the same events are delivered.
      expect([time, carriedAfter(start)]).toEqual([time, carriedAfter(await scanned(time))]);
    }
    expect(counting.logReads).toBe(0);
    expect(counting.reads).toBe(0);
  });

  it('scans the log where the store cannot search by time', async () => {
    const counting = new CountingStore(withOverrides(stores.events, { positionBeforeTime: undefined }));
    expect(await replayStartAt(counting.events, recordedAt(7_777))).toBe(positions[7_776 - (7_776 % 3)]);
    expect(counting.logReads).toBeGreaterThan(1);
  });
});
