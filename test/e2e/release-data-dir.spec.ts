import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Answered, answers, releaseEnv } from '../support/release-data-dir';
import { ServerProcess, startProcess } from '../support/server-process';

/**
 * A data directory written by the release before this code (test/fixtures/release-data-dir/,
 * written by test/support/write-release-data-dir.ts on that release's checkout) opens with this
 * code, which answers every read of it as that release did: whether it keeps the release's read
 * models, or folds them anew from the release's log.
 */
const FIXTURE = join(__dirname, '..', 'fixtures', 'release-data-dir');
const recorded: Answered[] = JSON.parse(readFileSync(join(FIXTURE, 'answers.json'), 'utf8'));

describe('a data directory written by the release before: this code reads everything back', () => {
  const dirs: string[] = [];
  let server: ServerProcess | null = null;
  afterEach(async () => {
    await server?.stop();
    server = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the fixture, its files as private as Parley writes them (git keeps no modes). */
  const copyOfFixture = (files: readonly string[]) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-release-data-dir-'));
    dirs.push(dataDir);
    for (const file of files) {
      cpSync(join(FIXTURE, file), join(dataDir, file));
      chmodSync(join(dataDir, file), 0o600);
    }
    return dataDir;
  };

  const readBack = async (dataDir: string) => {
    server = await startProcess('dist/src/main.js', releaseEnv(dataDir));
    const now = await answers(server.port, recorded);
    // Compared read by read, so a difference names its request.
    const answer = (a: Answered) => ({ read: a.path, as: a.sub, status: a.status, body: a.body });
    for (let i = 0; i < recorded.length; i++) expect(answer(now[i])).toEqual(answer(recorded[i]));
  };

  it('with its log and its read models', async () => {
    expect(recorded.length).toBeGreaterThan(15);
    await readBack(copyOfFixture(['events.sqlite', 'read-models.sqlite', 'master.key']));
  }, 120_000);

  it('with its log alone: the read models are folded anew from it', async () => {
    await readBack(copyOfFixture(['events.sqlite', 'master.key']));
  }, 120_000);
});
