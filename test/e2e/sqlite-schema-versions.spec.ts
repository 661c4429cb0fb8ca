import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToExit, startProcess } from '../support/server-process';
import { contentsOf, recordSchemaVersion, schemaVersionOf } from '../support/sqlite-files';

/**
 * The embedded server's SQLite files record their schema version, as the built server (what
 * `npm start` runs) and the CLIs see them: files from before versions start and are stamped, a
 * file from a newer release stops the start with a message naming it and both versions, and is
 * left as it was.
 */
const env = (dataDir: string) => ({ DATA_DIR: dataDir, INSTANCE_LOCATOR: 'v1:local:schema', INSTANCE_KEY: 'k:schema-secret' });
/** The newest schema version of each file (events.sqlite's 3: compact event rows, new ones' texts packed). */
const NEWEST = { events: 3, readModels: 2 };
const newestOf = (name: string) => (name === 'events.sqlite' ? NEWEST.events : NEWEST.readModels);

describe('SQLite schema versions at start (dist/src/main.js)', () => {
  let dir: string;
  let events: string;
  let readModels: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-schema-start-'));
    events = join(dir, 'events.sqlite');
    readModels = join(dir, 'read-models.sqlite');
    const first = await startProcess('dist/src/main.js', env(dir));
    await first.stop('SIGTERM');
  }, 90_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the server, checks it serves, stops it. */
  const startsAndServes = async () => {
    const server = await startProcess('dist/src/main.js', env(dir));
    try {
      expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
    } finally {
      await server.stop('SIGTERM');
    }
  };

  it('records the newest version in the files it creates', () => {
    expect([schemaVersionOf(events), schemaVersionOf(readModels)]).toEqual([NEWEST.events, NEWEST.readModels]);
  });

  // events.sqlite's layouts before versions and at version 1 differ from today's: migrating real
  // files of them is src/adapters/event-store/sqlite/schema.spec.ts's; read-models.sqlite's is the same.
  it('starts on a read-models.sqlite from before schema versions (none recorded), keeps everything in it, and records its version', async () => {
    recordSchemaVersion(readModels, 0);
    const before = contentsOf(events);
    expect(before.event_rows.length).toBeGreaterThan(0);
    await startsAndServes();
    expect([schemaVersionOf(events), schemaVersionOf(readModels)]).toEqual([NEWEST.events, NEWEST.readModels]);
    expect(contentsOf(events)).toEqual(before);
  }, 90_000);

  it.each([
    ['events.sqlite', 4],
    ['read-models.sqlite', 3],
  ])('refuses to start on a %s of a newer version (%i), naming the file and both versions, and leaves the data directory as it was', async (name, version) => {
    const file = join(dir, name);
    recordSchemaVersion(file, version);
    const before = { events: contentsOf(events), readModels: contentsOf(readModels) };
    try {
      const { code, stderr } = await runToExit('dist/src/main.js', env(dir));
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(
        `Parley could not start: ${file} has schema version ${version}, newer than this Parley knows (up to version ${newestOf(name)}): ` +
          'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
      );
      expect(schemaVersionOf(file)).toBe(version);
      expect({ events: contentsOf(events), readModels: contentsOf(readModels) }).toEqual(before);
      expect(existsSync(join(dir, 'parley.lock'))).toBe(false);
    } finally {
      recordSchemaVersion(file, newestOf(name));
    }
    // The same directory starts again once its files are of a version this release knows.
    await startsAndServes();
  }, 90_000);

  it('refuses the same in one line in the CLIs (npm run admin), leaving the file as it was', async () => {
    recordSchemaVersion(readModels, NEWEST.readModels + 1);
    try {
      const { code, stderr } = await runToExit('dist/src/cli/admin.js', env(dir), ['instance:list']);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(
        `error: ${readModels} has schema version ${NEWEST.readModels + 1}, newer than this Parley knows (up to version ${NEWEST.readModels}): ` +
          'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
      );
      expect(schemaVersionOf(readModels)).toBe(NEWEST.readModels + 1);
    } finally {
      recordSchemaVersion(readModels, NEWEST.readModels);
    }
  }, 90_000);
});
