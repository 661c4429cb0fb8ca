import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { scanForMarkers } from '../support/byte-scan';
import { spawnCli } from '../support/cli-process';
import { copyReleaseFixture, EventRow, holdsPlaintextPersonalFields, rowsOf } from '../support/plaintext-log';
import { openSealedLog } from '../support/sealed-log';
import { eventually } from '../support/waiting';

/**
 * kill -9 of `npm run admin -- data-dir:seal` at several points of its run, on a log of
 * thousands of plaintext messages (the release fixture with more appended as that release
 * wrote them): each time the log opens whole, every event in its place, either all as it was
 * or all sealed; the next run finishes the work, and what the log deleted is then gone.
 */
const MESSAGES = 6_000;
const DELETE_EVERY = 10;
const FIRST_ID = 2_001;

/** Appends plaintext messages (and deletes of every tenth) to the fixture's room "general", in the release's own form. */
function appendPlaintextMessages(eventsFile: string): { kept: string[]; deleted: string[] } {
  const db = new Database(eventsFile);
  const insert = db.prepare('INSERT INTO events (stream, revision, event_id, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const { revision } = db.prepare("SELECT MAX(revision) AS revision FROM events WHERE stream = 'messages-release.general'").get() as { revision: number };
  const kept: string[] = [];
  const deleted: string[] = [];
  const base = Date.parse('2026-11-26T16:00:00.000Z');
  const at = (i: number) => new Date(base + i).toISOString();
  const metadata = (i: number) => JSON.stringify({ instance_id: 'release', actor: { key_id: 'k', user_id: 'alice' }, occurred_at: at(i) });
  db.transaction(() => {
    for (let i = 0; i < MESSAGES; i++) {
      const id = FIRST_ID + i;
      const text = `bulk-${i}-${randomBytes(6).toString('hex')}`;
      const data = { id, user_id: 'alice', user_created_at: '2026-11-26T15:09:08.701Z', parts: [{ type: 'text/plain', content: text }], room_created_at: '2026-11-26T15:09:08.821Z', created_at: at(2 * i) };
      insert.run('messages-release.general', revision + 1 + i, randomUUID(), 'MessageSent', JSON.stringify(data), metadata(2 * i), at(2 * i));
      if (i % DELETE_EVERY === 0) {
        insert.run(`message-release.${id}`, 0, randomUUID(), 'MessageDeleted', JSON.stringify({ id, room_id: 'general', tombstone: false, deleted_at: at(2 * i + 1) }), metadata(2 * i + 1), at(2 * i + 1));
        deleted.push(text);
      } else kept.push(text);
    }
  })();
  db.close();
  return { kept, deleted };
}

const identity = ({ data: _data, ...rest }: EventRow) => rest;
const isSealed = (row: EventRow) => JSON.parse(row.data).sealed !== undefined;

/** Opens the log as the server does (recovering its WAL), checks the file, and answers its rows. */
async function logAfterKill(eventsFile: string): Promise<EventRow[]> {
  const store = new SqliteEventStore(eventsFile);
  await store.readAll({ maxCount: 1 });
  await store.close();
  const db = new Database(eventsFile);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
  return rowsOf(eventsFile);
}

describe('data-dir:seal across kill -9', () => {
  let dataDir: string;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('leaves the log as it was or sealed, never between, and the next run finishes the rewrite and the shredding', async () => {
    dataDir = copyReleaseFixture();
    const eventsFile = join(dataDir, 'events.sqlite');
    const bulk = appendPlaintextMessages(eventsFile);
    const before = rowsOf(eventsFile);
    const plaintext = before.filter(holdsPlaintextPersonalFields);

    // Early in the sealing transaction, at its last page (the commit and the compaction after it), during the shredding, and at the read models' compaction.
    const killPoints = [
      /sealing events\.sqlite: \d+ events read/,
      new RegExp(`sealing events\\.sqlite: ${before.length} events read`),
      /replaying the log's deletes/,
      /replayed \d+ deletes/,
    ];
    const outcomes: string[] = [];
    for (const point of killPoints) {
      const cli = spawnCli('admin', ['data-dir:seal'], { DATA_DIR: dataDir });
      let ended = false;
      void cli.exited.then(() => (ended = true));
      await eventually(() => ended || point.test(cli.output()), { timeoutMs: 60_000, everyMs: 2, what: `the rewrite at ${point}` });
      cli.child.kill('SIGKILL');
      const exit = await cli.exited;

      const rows = await logAfterKill(eventsFile);
      expect(rows.map(identity)).toEqual(before.map(identity));
      const sealed = rows.filter((row, i) => isSealed(row) && !isSealed(before[i])).length;
      expect([0, plaintext.length]).toContain(sealed);
      outcomes.push(`${exit.signal ?? exit.code}: ${sealed === 0 ? 'as it was' : 'sealed'}`);
    }
    // The kills landed in the run (not after it ended), at least once before the rewrite was committed.
    expect(outcomes[0]).toBe('SIGKILL: as it was');

    const finished = spawnCli('admin', ['data-dir:seal'], { DATA_DIR: dataDir });
    expect(await finished.exited).toMatchObject({ code: 0 });
    const rows = rowsOf(eventsFile);
    expect(rows.map(identity)).toEqual(before.map(identity));
    expect(rows.filter((row, i) => isSealed(row) && !isSealed(before[i]))).toHaveLength(plaintext.length);

    const log = openSealedLog(dataDir);
    const opened = await log.readAll({ maxCount: 100_000 }).finally(() => log.close());
    const textOf = (data: unknown) => ((data as { parts?: { content?: string }[] }).parts ?? []).map((p) => p.content ?? '').join('');
    const read = new Set(opened.map((e) => textOf(e.data)));
    expect(bulk.kept.filter((text) => !read.has(text))).toEqual([]);
    expect(bulk.deleted.filter((text) => read.has(text))).toEqual([]);
    expect(scanForMarkers({ files: [eventsFile, `${eventsFile}-wal`] }, [...bulk.kept.slice(0, 50), ...bulk.deleted.slice(0, 50)])).toEqual([]);
    expect(scanForMarkers({ folders: [dataDir] }, bulk.deleted)).toEqual([]);
  }, 300_000);
});
