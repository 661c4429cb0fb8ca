import { describe, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';
import { skippedTitle } from './skipped';

/** Mounting a file system (a small tmpfs is the full disk of the fault tests) needs root. */
export const asRoot = process.getuid?.() === 0;
export const NOT_ROOT = 'mounting a volume needs root';

/**
 * `describe(suite, body)`, or, where `unsupported` says why it cannot run here, the same tests
 * registered as skipped under `SKIPPED: <suite> (<why>)`. The body still runs to register them,
 * so it does its work in hooks and tests only.
 */
export function describeWhereSupported(unsupported: string | null, suite: string, body: () => void): void {
  if (unsupported) describe.skip(skippedTitle(suite, unsupported), body);
  else describe(suite, body);
}

/** `it(name, test)`, or, where `unsupported` says why it cannot run here, the test registered as skipped. */
export function itWhereSupported(unsupported: string | null, name: string, test: () => Promise<void>, timeoutMs?: number): void {
  if (unsupported) it.skip(skippedTitle(name, unsupported), test);
  else it(name, test, timeoutMs);
}

/** A suite that mounts volumes. */
export const describeAsRoot = (suite: string, body: () => void): void => describeWhereSupported(asRoot ? null : NOT_ROOT, suite, body);

/** A test that mounts volumes, inside a suite that does not. */
export const itAsRoot = (name: string, test: () => Promise<void>, timeoutMs?: number): void =>
  itWhereSupported(asRoot ? null : NOT_ROOT, name, test, timeoutMs);

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
