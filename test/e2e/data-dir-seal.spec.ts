import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { scanForMarkers } from '../support/byte-scan';
import { runCli } from '../support/cli-process';
import { copyReleaseFixture, EventRow, plaintextPersonalStrings, RELEASE_FIXTURE, releaseFixtureRows, rowsOf } from '../support/plaintext-log';
import { Answered, answers, RELEASE_INSTANCE, releaseEnv, send } from '../support/release-data-dir';
import { openSealedLog } from '../support/sealed-log';
import { ServerProcess, startProcess } from '../support/server-process';

/**
 * `npm run admin -- data-dir:seal` on a data directory written by the release before sealing
 * (test/fixtures/release-data-dir: plaintext messages, an edit, a delete): every plaintext
 * event a personal-data rule covers is sealed without changing anything else, what the log's
 * deletes destroy is gone from every file, answer, export and log, and everything else reads
 * back as the release answered it.
 */
const recorded: Answered[] = JSON.parse(readFileSync(join(RELEASE_FIXTURE, 'answers.json'), 'utf8'));
const fixtureRows = releaseFixtureRows();
const personal = plaintextPersonalStrings(fixtureRows);
const allMarkers = [...new Set(personal.flatMap((p) => p.strings))];
const seal = (dataDir: string) => runCli('admin', ['data-dir:seal'], { DATA_DIR: dataDir });
const audit = (path: string) => `/services/parley_audit/v1/${RELEASE_INSTANCE}${path}`;
/** What stays the same of a row when its data is sealed. */
const identity = ({ data: _data, ...rest }: EventRow) => rest;
const keysIn = (dataDir: string) => {
  const db = new Database(join(dataDir, 'keys.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM data_keys ORDER BY id').all();
  } finally {
    db.close();
  }
};

describe('data-dir:seal: an embedded data directory written before sealing, rewritten into the sealed form', () => {
  const dirs: string[] = [];
  let server: ServerProcess | null = null;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = null;
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const fixtureCopy = (files?: readonly string[]) => {
    const dir = copyReleaseFixture(files);
    dirs.push(dir);
    return dir;
  };
  const readBack = async (dataDir: string) => {
    server = await startProcess('dist/src/main.js', releaseEnv(dataDir));
    const now = await answers(server.port, recorded);
    const answer = (a: Answered) => ({ read: a.path, as: a.sub, status: a.status, body: a.body });
    for (let i = 0; i < recorded.length; i++) expect(answer(now[i])).toEqual(answer(recorded[i]));
  };

  it('seals every plaintext personal field in place, shreds what the log deleted from every surface, and reads everything else back as the release did', async () => {
    // The fixture is what the test says it is: plaintext, with the text of a deleted message and the text before an edit.
    expect(allMarkers).toEqual(expect.arrayContaining(['hello all', 'to be deleted', 'to be edited', 'a v2 message in private']));
    const dataDir = fixtureCopy();
    expect(scanForMarkers({ files: [join(dataDir, 'events.sqlite')] }, allMarkers).map((f) => f.marker).sort()).toEqual([...allMarkers].sort());

    const run = await seal(dataDir);
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain(`Sealed ${personal.length} of ${fixtureRows.length} events in ${dataDir}`);

    // Positions, ids, streams, revisions, types, metadata and times as they were; only the sealed rows' data changed.
    const rows = rowsOf(join(dataDir, 'events.sqlite'));
    expect(rows.map(identity)).toEqual(fixtureRows.map(identity));
    const sealedPositions = new Set(personal.map((p) => p.position));
    for (const [i, row] of rows.entries()) {
      if (sealedPositions.has(row.position)) expect(JSON.parse(row.data).sealed).toMatchObject({ k: expect.any(String), ct: expect.any(String) });
      else expect(row.data).toBe(fixtureRows[i].data);
    }

    // Read through the keys: what was not deleted opens to exactly what the release wrote; what the log's deletes destroyed reads erased.
    const log = openSealedLog(dataDir);
    const opened = await log.readAll({ maxCount: 10_000 }).finally(() => log.close());
    const erasedPositions = new Set(opened.filter((e) => (e.data as { erased?: boolean }).erased).map((e) => Number(e.position)));
    const kept = personal.filter((p) => !erasedPositions.has(p.position)).flatMap((p) => p.strings);
    // A string a kept event holds too (a part's type) is rightly still read.
    const destroyed = personal.filter((p) => erasedPositions.has(p.position)).flatMap((p) => p.strings.filter((s) => !kept.includes(s)));
    expect(destroyed.sort()).toEqual(['to be deleted', 'to be edited']);
    expect(kept).toEqual(expect.arrayContaining(['hello all', 'a v2 message in private']));
    for (const [i, event] of opened.entries()) {
      if (!erasedPositions.has(Number(event.position))) expect(event.data).toEqual(JSON.parse(fixtureRows[i].data));
    }

    // No plaintext of a sealed field left in the log or the key store; nothing destroyed left anywhere in DATA_DIR.
    const logFiles = ['events.sqlite', 'events.sqlite-wal', 'keys.sqlite', 'keys.sqlite-wal'].map((f) => join(dataDir, f));
    expect(scanForMarkers({ files: logFiles }, allMarkers)).toEqual([]);
    expect(scanForMarkers({ folders: [dataDir] }, destroyed)).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain('to be');

    // A server on it answers every read as the release did, and its other surfaces hold nothing destroyed.
    await readBack(dataDir);
    const auditRoom = await send(server!.port, 'GET', audit('/rooms/general?limit=1000'));
    expect(auditRoom.status).toBe(200);
    const history = auditRoom.body.events as { type: string; data: { id?: number; erased?: boolean } }[];
    expect(history.filter((e) => e.data.id === 5).map((e) => [e.type, e.data.erased ?? false])).toEqual([
      ['MessageSent', true],
      ['MessageDeleted', false],
    ]);
    expect(JSON.stringify(auditRoom.body)).toContain('hello all');
    const out = join(mkdtempSync(join(tmpdir(), 'parley-seal-export-')), 'export');
    dirs.push(join(out, '..'));
    expect(await runCli('export', [RELEASE_INSTANCE, '--out', out], { DATA_DIR: dataDir })).toMatchObject({ code: 0 });
    const surfaces = { folders: [dataDir, out], texts: { 'audit API': JSON.stringify(auditRoom.body), 'server output': server!.output.join('\n') } };
    expect(scanForMarkers(surfaces, destroyed)).toEqual([]);
    expect(scanForMarkers({ folders: [out] }, ['hello all'])).not.toEqual([]);
    await server!.stop();
    server = null;
    expect(scanForMarkers({ folders: [dataDir] }, destroyed)).toEqual([]);

    // The read models folded anew from the sealed log answer the same.
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `read-models.sqlite${suffix}`), { force: true });
    await readBack(dataDir);
  }, 180_000);

  it('changes nothing when run again: no event rewritten, no key made or destroyed', async () => {
    const dataDir = fixtureCopy();
    expect(await seal(dataDir)).toMatchObject({ code: 0 });
    const rows = rowsOf(join(dataDir, 'events.sqlite'));
    const keys = keysIn(dataDir);
    const again = await seal(dataDir);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain(`Sealed 0 of ${fixtureRows.length} events`);
    expect(again.stdout).toContain('0 data keys destroyed');
    expect(rowsOf(join(dataDir, 'events.sqlite'))).toEqual(rows);
    expect(keysIn(dataDir)).toEqual(keys);
  }, 60_000);

  it('rewrites a directory a killed server left (its lock, its WAL) after this release wrote to it, losing none of what it acknowledged', async () => {
    const dataDir = fixtureCopy();
    server = await startProcess('dist/src/main.js', releaseEnv(dataDir));
    const written = await send(server.port, 'POST', `/services/chatkit/v6/${RELEASE_INSTANCE}/rooms/general/messages`, {
      sub: 'alice',
      body: { parts: [{ type: 'text/plain', content: 'written after the upgrade' }] },
    });
    expect(written.status).toBe(201);
    await server.stop('SIGKILL');
    server = null;

    expect(await seal(dataDir)).toMatchObject({ code: 0 });
    const log = openSealedLog(dataDir);
    const texts = (await log.readAll({ maxCount: 10_000 }).finally(() => log.close())).map((e) => JSON.stringify(e.data));
    expect(texts.filter((t) => t.includes('written after the upgrade'))).toHaveLength(1);
    expect(scanForMarkers({ files: [join(dataDir, 'events.sqlite'), join(dataDir, 'events.sqlite-wal')] }, allMarkers)).toEqual([]);
    server = await startProcess('dist/src/main.js', releaseEnv(dataDir));
    const read = await send(server.port, 'GET', `/services/chatkit/v6/${RELEASE_INSTANCE}/rooms/general/messages?limit=100`, { sub: 'bob' });
    expect(JSON.stringify(read.body)).toContain('written after the upgrade');
    expect(JSON.stringify(read.body)).toContain('hello all');
  }, 120_000);

  it('refuses while a server holds the data directory, and changes nothing', async () => {
    const dataDir = fixtureCopy();
    server = await startProcess('dist/src/main.js', releaseEnv(dataDir));
    const refused = await seal(dataDir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: DATA_DIR .* is in use by another Parley process \(pid \d+/);
    expect(rowsOf(join(dataDir, 'events.sqlite')).slice(0, fixtureRows.length)).toEqual(fixtureRows);
  }, 60_000);

  it('refuses a directory that holds no event log, creating nothing', async () => {
    const dataDir = join(fixtureCopy([]), 'not-there');
    const refused = await seal(dataDir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`DATA_DIR ${dataDir} holds no event log (events.sqlite)`);
    expect(() => readFileSync(join(dataDir, 'events.sqlite'))).toThrow(/ENOENT/);
  }, 60_000);
});
