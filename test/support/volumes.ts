import { describe, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';

/** Mounting a file system (a small tmpfs is the full disk of the fault tests) needs root. */
export const asRoot = process.getuid?.() === 0;
export const NOT_ROOT = 'mounting a volume needs root';

/** What stands in for tests this machine cannot run: one passing test that says loudly that they did not run. */
function skipped(what: string, why: string): void {
  it(`SKIPPED: ${why}`, () => {
    process.stdout.write(`\nSKIPPED: ${what} (${why})\n`);
  });
}

/** `describe(suite, body)`, or, where `unsupported` says why it cannot run here, the SKIPPED stand-in. */
export function describeWhereSupported(unsupported: string | null, suite: string, body: () => void): void {
  describe(suite, unsupported ? () => skipped(suite, unsupported) : body);
}

/** A suite that mounts volumes. */
export const describeAsRoot = (suite: string, body: () => void): void => describeWhereSupported(asRoot ? null : NOT_ROOT, suite, body);

/** A test that mounts volumes, inside a suite that does not. */
export function itAsRoot(name: string, test: () => Promise<void>, timeoutMs?: number): void {
  if (asRoot) it(name, test, timeoutMs);
  else skipped(name, NOT_ROOT);
}

export function mountTmpfs(dir: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
}

/** Writes `path` until its file system refuses more bytes, then gives `leftFree` of them back. */
export function fillVolume(path: string, leftFree = 0): void {
  const fd = openSync(path, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  if (leftFree > 0) truncateSync(path, Math.max(0, statSync(path).size - leftFree));
}
