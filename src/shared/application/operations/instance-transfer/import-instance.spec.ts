import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBlobStore } from '../../../../adapters/blobs/fs/fs-blob-store';
import { SqliteEventStore } from '../../../../adapters/event-store/sqlite/sqlite-event-store';
import { refusingAppendsOver } from '../../../../../test/support/event-store-overrides';
import { checkExport, ImportConflictError, importInstance, ImportSourceError } from './import-instance';
import { EVENTS_FILE, EXPORT_FORMAT, EXPORT_VERSION, ExportedEvent, MANIFEST_FILE } from './transfer-format';

/**
 * The import into a log that refuses appends over a size (EventStoreDB's MaxAppendSize, 1 MiB
 * by default, where the import appended 200 events at once): a real SQLite log refusing what
 * EventStoreDB would, at a small limit.
 */
describe('importInstance into a log with a largest append', () => {
  let dir: string;
  let log: SqliteEventStore;
  let blobs: FsBlobStore;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-import-bytes-'));
    log = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    blobs = await FsBlobStore.open(join(dir, 'blobs'));
  });
  afterEach(async () => {
    await log.close();
    await blobs.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An export of one room's messages, each `text` long: one stream, so the import batches them. */
  function exportOf(texts: readonly string[], name = 'export'): string {
    const out = join(dir, name);
    mkdirSync(out);
    const events: ExportedEvent[] = texts.map((text, revision) => ({
      stream: 'timeline-acme.r1',
      revision,
      id: `00000000-0000-7000-8000-${String(revision).padStart(12, '0')}`,
      type: 'MessageSent',
      data: { text },
      metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
      recorded_at: '2026-01-01T00:00:00.000Z',
      position: String(revision + 1).padStart(20, '0'),
    }));
    writeFileSync(join(out, EVENTS_FILE), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    writeFileSync(
      join(out, MANIFEST_FILE),
      JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, instance_id: 'acme', source: 'test', started_at: '', complete: true, events: events.length, blobs: 0, last_position: null }),
    );
    return out;
  }

  const texts = Array.from({ length: 60 }, (_, i) => `${i}:${'m'.repeat(400)}`);
  const stored = async () => (await log.readStream('timeline-acme.r1')).map((e) => (e.data as { text: string }).text);

  it('appends batches by bytes as well as by count: every event imported, none refused', async () => {
    const limited = refusingAppendsOver(log, 4096);
    const out = exportOf(texts);
    const result = await importInstance(out, await checkExport(out), limited, blobs);
    expect(result).toMatchObject({ eventsAppended: 60, eventsPresent: 0 });
    expect(limited.refused).toBe(0);
    expect(await stored()).toEqual(texts);
  });

  it('a log whose limit is lower than it says: a refused batch goes again in halves', async () => {
    const limited = refusingAppendsOver(log, 4096, 1024 * 1024);
    const out = exportOf(texts);
    expect(await importInstance(out, await checkExport(out), limited, blobs)).toMatchObject({ eventsAppended: 60 });
    expect(limited.refused).toBeGreaterThan(0);
    expect(await stored()).toEqual(texts);
  });

  it('an event too large for the log on its own stops the import, saying which and what to raise; what came before is in', async () => {
    const out = exportOf(['first', 'x'.repeat(5_000), 'third']);
    const failure = await importInstance(out, await checkExport(out), refusingAppendsOver(log, 4096), blobs).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ImportSourceError);
    expect((failure as Error).message).toMatch(
      /^the event MessageSent 00000000-0000-7000-8000-000000000001 \(timeline-acme\.r1 revision 1\) is \d+ bytes, more than the target event log takes in one append \(4096\); raise its limit \(EventStoreDB: EVENTSTORE_MAX_APPEND_SIZE\)/,
    );
    expect(await stored()).toEqual(['first']);
  });

  it('a later, overlapping export appends only what is new; a target that took writes of its own after the first import stops it where they diverge', async () => {
    const first = exportOf(texts.slice(0, 40), 'first');
    expect(await importInstance(first, await checkExport(first), log, blobs)).toMatchObject({ eventsAppended: 40, eventsPresent: 0 });
    const later = exportOf(texts, 'later');
    expect(await importInstance(later, await checkExport(later), log, blobs)).toMatchObject({ eventsAppended: 20, eventsPresent: 40 });
    expect(await importInstance(first, await checkExport(first), log, blobs)).toMatchObject({ eventsAppended: 0, eventsPresent: 40 });
    expect(await stored()).toEqual(texts);

    // A target that took a write of its own after the first import: the export's event 40 is another one there.
    const diverged = new SqliteEventStore(join(dir, 'diverged.sqlite'), { synchronous: 'NORMAL' });
    try {
      await importInstance(first, await checkExport(first), diverged, blobs);
      await diverged.append('timeline-acme.r1', [{ type: 'MessageSent', data: { text: 'written on the target' }, metadata: { occurred_at: '2026-01-02T00:00:00.000Z' } }], 39);
      const failure = await importInstance(later, await checkExport(later), diverged, blobs).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(ImportConflictError);
      expect((failure as Error).message).toMatch(
        /^the target's stream timeline-acme\.r1 holds another event at revision 40 \(MessageSent \S+ instead of MessageSent 00000000-0000-7000-8000-000000000040\): the target took writes of its own after an earlier import.*must take no writes until its last import/,
      );
      const there = (await diverged.readStream('timeline-acme.r1')).map((e) => (e.data as { text: string }).text);
      expect(there).toEqual([...texts.slice(0, 40), 'written on the target']);
    } finally {
      await diverged.close();
    }
  });
});
