import jwt from 'jsonwebtoken';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawRequest } from './raw-request';
import { ServerProcess, startProcess } from './server-process';

/**
 * What an upgrade spec works with: one data directory, the server of a release on it (the
 * release before, then this one: one at a time), tokens of the instance's key, and calls that
 * answer 2xx (anything else throws, naming the call and the answer).
 */
export class UpgradeLab {
  readonly dataDir: string;
  private server: ServerProcess | null = null;

  constructor(
    private readonly instance: string,
    /** The instance's key, `<id>:<secret>`. */
    private readonly key: string,
  ) {
    this.dataDir = mkdtempSync(join(tmpdir(), `parley-${instance}-`));
  }

  /** The environment of a server or CLI on the data directory, the instance and its key. */
  readonly env = (): Record<string, string> => ({ DATA_DIR: this.dataDir, INSTANCE_LOCATOR: `v1:local:${this.instance}`, INSTANCE_KEY: this.key, MASTER_KEY: '' });

  /** Starts `entry` (a release's main script) on the data directory. */
  readonly start = async (entry: string, extra: Record<string, string> = {}): Promise<ServerProcess> => {
    this.server = await startProcess(entry, { ...this.env(), ...extra });
    return this.server;
  };

  /** Stops the server as an operator does (SIGTERM: it drains). */
  readonly stop = async (): Promise<void> => {
    await this.server?.stop('SIGTERM');
    this.server = null;
  };

  readonly token = (claims: { sub?: string; su?: boolean }): string =>
    jwt.sign({ instance: this.instance, iss: `api_keys/${this.key.split(':')[0]}`, ...claims }, this.key.slice(this.key.indexOf(':') + 1), { algorithm: 'HS256', expiresIn: 3600 });

  /** Where the running server answers. */
  readonly baseUrl = (): string => `http://127.0.0.1:${this.server!.port}`;

  /** A path of the instance's chat API, v6. */
  readonly v6 = (path: string): string => `/services/chatkit/v6/${this.instance}${path}`;

  /** The answer's JSON; as su unless `as` (a token) is given. */
  readonly call = async (method: string, path: string, options: { body?: unknown; as?: string } = {}): Promise<any> => {
    const response = await rawRequest(this.baseUrl(), method, path, options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)), {
      authorization: `Bearer ${options.as ?? this.token({ su: true })}`,
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.bytes.toString()}`);
    return response.json;
  };

  /** Kills a server still running (a failed spec) and removes the data directory. */
  async cleanUp(): Promise<void> {
    await this.server?.stop('SIGKILL');
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** A plain-text message's body. */
export const textMessage = (content: string) => ({ parts: [{ type: 'text/plain', content }] });
