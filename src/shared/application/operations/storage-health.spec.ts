import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { EventToAppend } from '../../ports/event-store.port';
import { ObservedEventStore, StorageHealth } from './storage-health';
import { sleep } from '../../../../test/support/waiting';

const event = (bytes: number): EventToAppend => ({
  id: randomUUID(),
  type: 'Filled',
  // Random, so that it takes its size on disk (the log deflates what repeats: schema version 3).
  data: { padding: randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes) },
  metadata: { occurred_at: new Date().toISOString() },
});

/** The log on a nearly full disk (SQLite's page limit): small appends still fit, large ones do not. */
describe('StorageHealth over a real SQLite event log on a nearly full disk', () => {
  const HOLD_MS = 3_000;
  let dir: string;
  let inner: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-storage-health-'));
    inner = new SqliteEventStore(join(dir, 'events.sqlite'), { pollMs: 50, maxPageCount: 64 });
  });
  afterEach(async () => {
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps reporting a failure that small appends succeeding meanwhile do not disprove, until the hold time passes with no failure', async () => {
    const health = new StorageHealth(HOLD_MS);
    const events = new ObservedEventStore(inner, health);
    await events.append('small-1', [event(10)], 'no_stream');
    await expect(events.append('large', [event(1024 * 1024)], 'no_stream')).rejects.toThrow(/disk is full/);
    await events.append('small-2', [event(10)], 'no_stream');
    expect(health.failing).toMatchObject({ error: expect.stringMatching(/disk is full/), recent: true });

    await sleep(HOLD_MS + 50);
    // Past the hold, nothing failed: a probe may clear it, and so does the next append that succeeds.
    expect(health.failing).toMatchObject({ recent: false });
    await events.append('small-3', [event(10)], 'no_stream');
    expect(health.failing).toBeNull();
  });
});
