import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/**
 * The two ways to run the tests: `npm test` runs every spec (jest.config.js); `npm run test:unit`
 * runs the fast tier (jest.unit.config.js), which holds the pure specs and keeps them pure.
 */
const ROOT = join(__dirname, '..', '..');
const JEST = require.resolve('jest/bin/jest');

const listed = (config: string): string[] => {
  const run = spawnSync(process.execPath, [JEST, '--config', config, '--listTests'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  expect({ exit: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ exit: 0, stderr: '' });
  return run.stdout
    .split('\n')
    .filter((line) => line.endsWith('.ts'))
    .map((file) => relative(ROOT, file))
    .sort();
};

/** Spec files under `dir` whose path matches `pattern`. */
const specsUnder = (dir: string, pattern: RegExp): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((file) => join(dir, file))
    .filter((file) => pattern.test(file))
    .sort();

describe('the test tiers', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-tiers-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the fast tier holds a spec of every decider, and every projection and configuration spec, and only specs the full run also runs', () => {
    const full = listed('jest.config.js');
    const fast = listed('jest.unit.config.js');
    const deciders = specsUnder('src/modules', /^src\/modules\/[^/]+\/domain\/[^/]+\.deciders?\.ts$/);
    expect(deciders).toContain('src/modules/roles/domain/user-roles.decider.ts');
    const expected = [
      ...deciders.map((file) => file.replace(/\.ts$/, '.spec.ts')),
      ...specsUnder('projections', /\.spec\.ts$/),
      ...specsUnder('src/config', /\.spec\.ts$/),
    ];
    expect(expected.filter((file) => !fast.includes(file))).toEqual([]);
    expect(fast.filter((file) => !full.includes(file))).toEqual([]);
    expect(fast.filter((file) => /^test\/(e2e|faults|contract|cli)\//.test(file))).toEqual([]);
  }, 150_000);

  it('the fast tier refuses servers, sockets, processes and SQLite files, naming itself, allows SQLite in memory, and says how long it took', () => {
    const jsonFile = join(dir, 'jest.json');
    const env = { ...process.env, PARLEY_TEST_RESULTS: join(dir, 'results.json'), PARLEY_FIXTURE_DIR: dir };
    const run = spawnSync(
      process.execPath,
      [JEST, '--config', 'jest.unit.config.js', '--testMatch', '<rootDir>/test/fixtures/unit-tier/*.fixture.ts', '--json', '--outputFile', jsonFile, '--ci', '--silent', '--forceExit'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status).toBe(1);
    const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
    const outcomes = report.testResults.flatMap((file: any) =>
      file.assertionResults.map((test: any) => ({ test: test.title, status: test.status, refusal: /The fast tier \(npm run test:unit\) ([^:]+):/.exec(test.failureMessages.join('\n'))?.[1] ?? null })),
    );
    expect(outcomes).toEqual([
      { test: 'refuses a server', status: 'failed', refusal: 'starts no server' },
      { test: 'refuses a socket', status: 'failed', refusal: 'opens no socket' },
      { test: 'refuses a datagram socket', status: 'failed', refusal: 'opens no socket' },
      { test: 'refuses a process', status: 'failed', refusal: 'starts no process' },
      { test: 'refuses a synchronous process', status: 'failed', refusal: 'starts no process' },
      { test: 'refuses a SQLite file', status: 'failed', refusal: `opens no SQLite file (${join(dir, 'refused.sqlite')})` },
      { test: 'allows SQLite in memory', status: 'passed', refusal: null },
    ]);
    expect(existsSync(join(dir, 'refused.sqlite'))).toBe(false);

    // `npm run test:unit` ends with how long the tier's jest ran, then the closing counts.
    const summary = spawnSync(process.execPath, [join(ROOT, 'test', 'support', 'print-summary.js'), String(run.status), 'The fast tier'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(summary.status).toBe(1);
    expect(summary.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^The fast tier took \d+\.\d s$/), '', '1 passed, 6 failed, 0 skipped']);
  }, 150_000);
});
