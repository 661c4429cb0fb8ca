import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** How a CLI process ended, and everything it wrote. */
export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliProcess {
  readonly child: ChildProcess;
  /** stdout and stderr as they come, together. */
  output(): string;
  readonly exited: Promise<CliExit>;
}

/**
 * One of Parley's built CLIs (`dist/src/cli/<name>.js`, what `npm run <name>` runs) as a real
 * child process, with the stores `env` selects and nothing of the test process's own store
 * settings (MASTER_KEY, EVENTSTORE_CONNECTION_STRING, MONGODB_URI, INSTANCE_*).
 */
export function spawnCli(name: string, args: readonly string[], env: Record<string, string>): CliProcess {
  const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  for (const unset of ['MASTER_KEY', 'EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) delete base[unset];
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli', `${name}.js`), ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let both = '';
  child.stdout!.on('data', (d) => ((stdout += d), (both += d)));
  child.stderr!.on('data', (d) => ((stderr += d), (both += d)));
  const exited = new Promise<CliExit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, output: () => both, exited };
}

/** Runs a built CLI to its end. */
export const runCli = (name: string, args: readonly string[], env: Record<string, string>): Promise<CliExit> => spawnCli(name, args, env).exited;
