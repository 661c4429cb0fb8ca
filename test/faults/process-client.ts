import jwt from 'jsonwebtoken';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcess, startProcess } from '../support/server-process';
import { holdsWithin } from '../support/waiting';
import { answerOf } from '../support/json-call';

/**
 * What fault tests share: a data directory per test, Parley's built entry points as child
 * processes on it, and a client speaking to them as an app's server would (su tokens signed
 * with the instance key).
 */
export const INSTANCE = 'faults';
const SECRET = 'fault-secret';

export const processEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
  INSTANCE_KEY: `k:${SECRET}`,
  ...extra,
});

export const tokenFor = (claims: { sub?: string; su?: boolean }) =>
  jwt.sign({ instance: INSTANCE, iss: 'api_keys/k', ...claims }, SECRET, { algorithm: 'HS256', expiresIn: 600 });

export interface Answer {
  readonly status: number;
  readonly body: any;
}

/** One chat API call; a connection that fails answers status 0 (what a client sees when nothing came back). */
export async function chat(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  { sub, version = 'v6' }: { sub?: string; version?: 'v2' | 'v6' } = {},
): Promise<Answer> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/services/chatkit/${version}/${INSTANCE}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokenFor(sub ? { sub } : { su: true })}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return await answerOf(response);
  } catch {
    return { status: 0, body: null };
  }
}

export async function health(port: number): Promise<Answer> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    return { status: response.status, body: await response.json() };
  } catch {
    return { status: 0, body: null };
  }
}

/** Polls until `check` holds or the time is up; returns whether it held. */
export const eventually = (check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> =>
  holdsWithin(check, { timeoutMs, everyMs });

/** Data directories and processes a suite starts, all ended by `cleanUp`. */
export class FaultLab {
  private readonly dirs: string[] = [];
  private readonly processes: ServerProcess[] = [];

  dataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'parley-faults-'));
    this.dirs.push(dir);
    return dir;
  }

  async start(entry: string, env: Record<string, string>, ready?: RegExp, options?: { args?: readonly string[] }): Promise<ServerProcess> {
    const started = await startProcess(entry, env, ready, options);
    this.processes.push(started);
    return started;
  }

  /** A projector worker, once it says it runs. */
  startWorker(env: Record<string, string>): Promise<ServerProcess> {
    return this.start('dist/src/main.projector.js', env, /projector worker running/);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.processes.splice(0).map((p) => p.stop('SIGKILL')));
  }

  async cleanUp(): Promise<void> {
    await this.stopAll();
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
