import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What `npm test` ends with, on a jest run of its own over test/fixtures/skipped-suites: suites
 * and tests that cannot run here are counted as skipped, never as passed, and the closing lines
 * say which did not run and why before "N passed, M failed, K skipped".
 */
const ROOT = join(__dirname, '..', '..');

describe('the closing summary of a test run', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-summary-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts suites and tests that cannot run here as skipped, and names each with its reason', () => {
    const config = {
      rootDir: ROOT,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/fixtures/skipped-suites/*.fixture.ts'],
      transform: { '^.+\\.ts$': [require.resolve('ts-jest'), { diagnostics: false }] },
      reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
    };
    const env = { ...process.env, PARLEY_TEST_RESULTS: join(dir, 'results.json'), PARLEY_FIXTURE_NEVER_SET: '' };
    const jsonFile = join(dir, 'jest.json');
    const jest = spawnSync(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--config', JSON.stringify(config), '--json', '--outputFile', jsonFile, '--ci', '--silent'],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    expect({ jestExit: jest.status, stderr: jest.status === 0 ? '' : jest.stderr }).toEqual({ jestExit: 0, stderr: '' });
    const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
    expect({ passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests }).toEqual({ passed: 1, failed: 0, skipped: 4 });

    const summary = spawnSync(process.execPath, [join(ROOT, 'test', 'support', 'print-summary.js'), String(jest.status)], { cwd: ROOT, env, encoding: 'utf8' });
    expect(summary.status).toBe(0);
    expect(summary.stdout.trim().split('\n')).toEqual([
      'SKIPPED: a contract suite for a server that is not there (PARLEY_FIXTURE_NEVER_SET is not set): 2 tests not run',
      'SKIPPED: a suite that needs what is missing (this machine lacks it): 1 test not run',
      'SKIPPED: a test that needs a loop device (no loop devices here): 1 test not run',
      '',
      '1 passed, 0 failed, 4 skipped',
    ]);
  }, 150_000);

  it('ends a run in which jest never reported with a failure', () => {
    const env = { ...process.env, PARLEY_TEST_RESULTS: join(dir, 'never-written.json') };
    const summary = spawnSync(process.execPath, [join(ROOT, 'test', 'support', 'print-summary.js'), '1'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(summary.status).toBe(1);
    expect(summary.stdout.trim()).toBe('0 passed, 1 failed, 0 skipped');
  });
});
