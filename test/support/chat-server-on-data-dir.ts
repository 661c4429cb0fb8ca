import jwt from 'jsonwebtoken';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcess, startProcess } from './server-process';

const ROOT = join(__dirname, '..', '..');

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: any;
}

/**
 * A real embedded server from dist/ on a data directory, for the specs that scan what a delete
 * leaves: tokens of one instance, calls as su or as a user, and a fresh export by the built CLI
 * beside the running server.
 */
export class ChatServerOnDataDir {
  private constructor(
    readonly dataDir: string,
    readonly instance: string,
    private readonly key: string,
    readonly process: ServerProcess,
  ) {}

  static async start(dataDir: string, instance: string, key: string): Promise<ChatServerOnDataDir> {
    const process = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: key, MASTER_KEY: '' });
    return new ChatServerOnDataDir(dataDir, instance, key, process);
  }

  token(claims: { sub?: string; su?: boolean }): string {
    const [id, secret] = [this.key.slice(0, this.key.indexOf(':')), this.key.slice(this.key.indexOf(':') + 1)];
    return jwt.sign({ instance: this.instance, iss: `api_keys/${id}`, ...claims }, secret, { algorithm: 'HS256', expiresIn: 3600 });
  }

  /** A call (as su unless `as` gives a token); a status of 300 or more throws unless `anyStatus`. */
  async call(method: string, path: string, options: { body?: unknown; as?: string; anyStatus?: boolean } = {}): Promise<Answer> {
    const response = await fetch(`http://127.0.0.1:${this.process.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.as ?? this.token({ su: true })}`, ...(options.body !== undefined && { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    if (response.status >= 300 && !options.anyStatus) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
  }

  /** A fresh export of the instance (`npm run admin -- export`'s entry point) into a new temporary folder: the folder. */
  exportNow(): Promise<string> {
    const out = join(mkdtempSync(join(tmpdir(), 'parley-scan-export-')), 'export');
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: this.dataDir, LOG_LEVEL: 'warn' };
    for (const name of ['MASTER_KEY', 'EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) delete env[name];
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli/export.js'), this.instance, '--out', out], { env, cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`export exited with ${code}: ${stderr}`)))));
  }

  /** What the server wrote to stdout and stderr so far. */
  get log(): string {
    return this.process.output.join('\n');
  }

  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    return this.process.stop(signal);
  }
}
