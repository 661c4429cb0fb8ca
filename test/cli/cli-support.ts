import jwt from 'jsonwebtoken';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config';
import { openRuntime } from '../../src/app/runtime';
import type { Projectors } from '../../src/shared/application/projection-runtime/process-projectors';
import { RunningServer, startServer } from '../../src/app/create-app';
import { CliIo } from '../../src/cli/cli-io';
import { eventually as untilHolds } from '../support/waiting';

export const newDataDir = () => mkdtempSync(join(tmpdir(), 'parley-cli-'));

export interface CapturedIo extends CliIo {
  readonly stdout: string[];
  readonly stderr: string[];
  out(line: string): void;
  err(line: string): void;
  /** Everything written to stdout, newline-terminated lines. */
  text(): string;
  errText(): string;
}

/** A CliIo that keeps every line (and is no terminal, so progress comes as plain lines). */
export function captureIo(): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (line) => stdout.push(...line.split('\n')),
    err: (line) => stderr.push(...line.split('\n')),
    text: () => stdout.map((l) => l + '\n').join(''),
    errText: () => stderr.map((l) => l + '\n').join(''),
  };
}

export const KEY_ID = 'boot-key';
export const KEY_SECRET = 'boot-secret-7f3a9c0e51d2';

export interface Parley {
  readonly server: RunningServer;
  /** The server's in-process projectors. */
  readonly runner: Projectors;
  readonly instanceId: string;
  /** An access token signed with `secret` (default: the bootstrap key) for `instanceId`. */
  token(claims?: { sub?: string; su?: boolean }, key?: { keyId: string; secret: string }, instanceId?: string): string;
  chat(path: string, version?: 'v2' | 'v6', instanceId?: string): string;
  request(method: string, path: string, options?: { body?: unknown; token?: string | null }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * A real server on the embedded SQLite stores in `dataDir`, bootstrapping `instanceId` with a
 * fixed key, so that a second start on the same directory serves the same instance.
 */
export async function startParley(dataDir: string, instanceId: string): Promise<Parley> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    INSTANCE_LOCATOR: `v1:local:${instanceId}`,
    INSTANCE_KEY: `${KEY_ID}:${KEY_SECRET}`,
    LOG_LEVEL: 'warn',
  });
  const runtime = await openRuntime(config, 'embedded');
  const server = await startServer(runtime);
  const baseUrl = `http://127.0.0.1:${server.httpPort}`;
  const token: Parley['token'] = ({ sub, su } = { su: true }, key = { keyId: KEY_ID, secret: KEY_SECRET }, instance = instanceId) =>
    jwt.sign(
      { instance, iss: `api_keys/${key.keyId}`, ...(sub !== undefined && { sub }), ...(su && { su: true }) },
      key.secret,
      { algorithm: 'HS256', expiresIn: 3600 },
    );
  const suToken = token({ su: true });
  return {
    server,
    runner: runtime.runner!,
    instanceId,
    token,
    chat: (path, version = 'v6', instance = instanceId) => `/services/chatkit/${version}/${instance}${path}`,
    async request(method, path, { body, token: t = suToken } = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: {
          ...(t && { authorization: `Bearer ${t}` }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed };
    },
    close: () => server.close(),
  };
}

/** Polls `probe` until it returns true, for at most `timeoutMs`; resolves to the time it took. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  await untilHolds(probe, { timeoutMs, everyMs: 50 });
  return Date.now() - started;
}
