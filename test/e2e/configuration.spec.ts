import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runToExit, startProcess, ServerProcess } from '../support/server-process';
import { contentsOf } from '../support/sqlite-files';

/** Start-up checks of the built server as a child process: the master key and every number. */
const env = (dataDir: string) => ({ DATA_DIR: dataDir, INSTANCE_LOCATOR: 'v1:local:conf', INSTANCE_KEY: 'k:conf-secret' });
const otherKey = Buffer.alloc(32, 42).toString('base64');

describe('start-up configuration checks', () => {
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A data directory in which a server created an instance and a key (sealed with its generated master.key). */
  async function sealedDataDir(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'parley-conf-'));
    dirs.push(dir);
    const first = await startProcess('dist/src/main.js', { ...env(dir), MASTER_KEY: '' });
    await first.stop('SIGTERM');
    return dir;
  }

  it('refuses a MASTER_KEY that does not open the stored secrets, naming it, and writes nothing', async () => {
    const dir = await sealedDataDir();
    const keyFile = readFileSync(join(dir, 'master.key'), 'utf8');
    const before = { events: contentsOf(join(dir, 'events.sqlite')), readModels: contentsOf(join(dir, 'read-models.sqlite')) };
    expect(before.events.event_rows.length).toBeGreaterThan(0);

    for (const entry of ['dist/src/main.js', 'dist/src/main.projector.js']) {
      const { code, stderr } = await runToExit(entry, { ...env(dir), MASTER_KEY: otherKey });
      expect(code).not.toBe(0);
      expect(stderr).toContain("Parley could not start: MASTER_KEY is not the master key the event log's key secrets were sealed with");
    }
    expect({ events: contentsOf(join(dir, 'events.sqlite')), readModels: contentsOf(join(dir, 'read-models.sqlite')) }).toEqual(before);
    expect(readFileSync(join(dir, 'master.key'), 'utf8')).toBe(keyFile);

    // The right key still opens everything.
    const again = await startProcess('dist/src/main.js', { ...env(dir), MASTER_KEY: keyFile.trim() });
    running.push(again);
    expect((await fetch(`http://127.0.0.1:${again.port}/health`)).status).toBe(200);
  }, 60_000);

  it('refuses to generate a master.key beside sealed secrets whose key file is gone', async () => {
    const dir = await sealedDataDir();
    unlinkSync(join(dir, 'master.key'));
    const { code, stderr } = await runToExit('dist/src/main.js', env(dir));
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/Parley could not start: .*MASTER_KEY is not set and .*master\.key does not exist/);
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
  }, 60_000);

  // Every variable's checks are unit-tested in src/config; these two, from the issue, also end to end.
  it.each([
    ['READ_YOUR_WRITES_TIMEOUT_MS', 'abc', 'READ_YOUR_WRITES_TIMEOUT_MS must be a whole number of milliseconds from 1 to 600000, got "abc"'],
    ['KEEPALIVE_INTERVAL_MS', 'abc', 'KEEPALIVE_INTERVAL_MS must be a whole number of milliseconds from 100 to 30000, got "abc"'],
  ])('stops at start when %s=%s, saying what it accepts', async (name, value, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-conf-'));
    dirs.push(dir);
    const { code, stderr } = await runToExit('dist/src/main.js', { DATA_DIR: dir, [name]: value });
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`Parley could not start: ${message}`);
  }, 30_000);
});
