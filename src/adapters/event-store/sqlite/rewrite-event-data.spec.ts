import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../../../../test/support/byte-scan';
import { eventRowsOf } from '../../../../test/support/event-log-rows';
import { rewriteEventData } from './rewrite-event-data';
import { SqliteEventStore } from './sqlite-event-store';

const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('rewriteEventData', () => {
  let dir: string;
  let file: string;
  const texts = Array.from({ length: 2_500 }, (_, i) => marker(`old-${i}`));
  const rows = () => eventRowsOf(file);
  const schema = () => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    } finally {
      db.close();
    }
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-rewrite-'));
    file = join(dir, 'events.sqlite');
    const log = new SqliteEventStore(file);
    for (let i = 0; i < texts.length; i += 500) {
      await log.append('s-acme.1', texts.slice(i, i + 500).map((text) => ({ type: 'Said', data: { text }, metadata: meta })), 'any');
    }
    await log.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the data of the events it is given, page by page, and nothing else; the replaced bytes are gone from the file and its WAL', async () => {
    const before = rows();
    const shape = schema();
    const pages: number[] = [];
    const progress = await rewriteEventData(
      file,
      async (page) => {
        pages.push(page.length);
        return new Map(page.filter((row) => row.position % 2 === 0).map((row) => [row.position, JSON.stringify({ text: `new-${row.position}` })]));
      },
    );
    expect(pages).toEqual([1_000, 1_000, 500]);
    expect(progress).toEqual({ read: 2_500, rewritten: 1_250 });
    const after = rows();
    expect(after.map(({ data: _d, ...rest }) => rest)).toEqual(before.map(({ data: _d, ...rest }) => rest));
    for (const [i, row] of after.entries()) expect(row.data).toBe(row.position % 2 === 0 ? JSON.stringify({ text: `new-${row.position}` }) : before[i].data);
    // The log is append-only again, its schema as it was.
    expect(schema()).toEqual(shape);
    const db = new Database(file);
    expect(() => db.prepare('UPDATE events SET data = ? WHERE position = 1').run('{}')).toThrow('the event log is append-only');
    db.close();
    const replaced = texts.filter((_, i) => (i + 1) % 2 === 0);
    expect(scanForMarkers({ folders: [dir] }, replaced)).toEqual([]);
    expect(scanForMarkers({ folders: [dir] }, [texts[0]])).not.toEqual([]);
  });

  it('reads the log as the rewrite left it so far to the rewrite (its history)', async () => {
    const seen: unknown[] = [];
    await rewriteEventData(file, async (page, history) => {
      seen.push((await history.readStream('s-acme.1', { fromRevision: 0, maxCount: 1 }))[0]);
      return new Map(page[0].position === 1 ? [[1, '{"text":"first, rewritten"}']] : []);
    });
    expect(seen).toEqual([
      { type: 'Said', data: { text: texts[0] } },
      { type: 'Said', data: { text: 'first, rewritten' } },
      { type: 'Said', data: { text: 'first, rewritten' } },
    ]);
  });

  it('leaves the log as it was when the rewrite fails midway, append-only as before', async () => {
    const before = rows();
    const shape = schema();
    let pages = 0;
    await expect(
      rewriteEventData(file, async (page) => {
        if (++pages === 2) throw new Error('failed on page 2');
        return new Map(page.map((row) => [row.position, '{"text":"new"}']));
      }),
    ).rejects.toThrow('failed on page 2');
    expect(rows()).toEqual(before);
    expect(schema()).toEqual(shape);
  });

  it('refuses a file that is not there, creating nothing', async () => {
    await expect(rewriteEventData(join(dir, 'none.sqlite'), async () => new Map())).rejects.toThrow(`there is no event log at ${join(dir, 'none.sqlite')}`);
    expect(() => new Database(join(dir, 'none.sqlite'), { fileMustExist: true })).toThrow();
  });
});
