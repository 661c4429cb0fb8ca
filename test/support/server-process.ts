import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(__dirname, '..', '..');
/** Generous: on 2 busy cores (the whole suite, a concurrent npm install) a start can take well over 20 s. */
const START_TIMEOUT_MS = 60_000;

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Set once the process logs that it listens (API processes only). */
  readonly port: number;
  /** What the process wrote so far (stdout lines, stderr chunks), growing while it runs. */
  readonly output: readonly string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Node running `script`, under a shell that sets `umask` first when one is given (as an init script or a container might). */
export const commandFor = (script: string, umask?: string, args: readonly string[] = []): [string, string[]] =>
  umask === undefined
    ? [process.execPath, [script, ...args]]
    : ['/bin/sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, script, ...args]];

/**
 * Runs one of Parley's built entry points (dist/src/main.js, main.api.js, main.projector.js:
 * what `npm start` and the production scripts run; `npm test` builds them first) as a real
 * child process, and resolves once it is ready.
 */
export function startProcess(
  entry: string,
  env: Record<string, string>,
  ready: RegExp = /Parley is listening/,
  options: { umask?: string; args?: readonly string[] } = {},
): Promise<ServerProcess> {
  const child = spawn(...commandFor(join(ROOT, entry), options.umask, options.args), {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${entry} did not start in time:\n${output.join('\n')}`)), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('exit', (code) => fail(new Error(`${entry} exited with ${code}:\n${output.join('\n')}`)));
    child.stderr!.on('data', (d) => output.push(String(d)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      if (!ready.test(line)) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      let port = 0;
      try {
        port = JSON.parse(line).httpPort ?? 0;
      } catch {
        /* not JSON: a worker's line */
      }
      resolve({
        child,
        port,
        output,
        stop: (signal = 'SIGTERM') =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill(signal);
          }),
      });
    });
  });
}

/**
 * Runs one of Parley's built entry points that is expected to stop on its own (a refused
 * start); resolves with its exit code and what it wrote to stderr. One that is still running
 * after START_TIMEOUT_MS (it started instead) is killed and resolves with code null.
 */
export function runToExit(
  entry: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1', MASTER_KEY: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}
