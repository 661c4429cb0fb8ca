import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const PROJECT_ROOT = resolve(__dirname, '..', '..');

/**
 * The compiled script of a worker thread beside `dir` (a source folder's `__dirname`). Under
 * ts-jest the caller is TypeScript and the thread runs the build in `dist/` (tests that start
 * threads build first).
 */
export function workerScript(dir: string, file: string, callerFile: string): string {
  if (callerFile.endsWith('.js')) return join(dir, file);
  const built = join(PROJECT_ROOT, 'dist', relative(PROJECT_ROOT, dir), file);
  if (!existsSync(built)) throw new Error(`the thread runs ${built}: build first (npm run build)`);
  return built;
}
