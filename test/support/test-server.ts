import jwt from 'jsonwebtoken';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config';
import { openRuntime, Runtime } from '../../src/app/runtime';
import { RunningServer, startServer } from '../../src/app/create-app';

export const CERT_FILE = join(__dirname, '..', '.certs', 'localhost.pem');
export const KEY_FILE = join(__dirname, '..', '.certs', 'localhost-key.pem');

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer {
  readonly server: RunningServer;
  /** The runtime the server runs on (its projectors, stores and watch). */
  readonly runtime: Runtime;
  readonly baseUrl: string;
  readonly httpsPort?: number;
  readonly dataDir: string;
  readonly instanceId: string;
  readonly keyId: string;
  readonly secret: string;
  readonly locator: string;
  /** An access token as chatkit-server mints it (HS256, the instance key). */
  token(claims?: { sub?: string; su?: boolean; expiresIn?: number }): string;
  /** `/services/chatkit/<version>/<instance>` + path. */
  chat(path: string, version?: 'v2' | 'v6'): string;
  request<T = any>(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> },
  ): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * A real Parley server on the embedded SQLite default, in a fresh data directory, on free
 * ports of 127.0.0.1, with one instance, one key and the test token provider enabled.
 */
export async function startTestServer(
  options: { https?: boolean; dataDir?: string; env?: Record<string, string>; projectorThreadTestHooks?: boolean } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'parley-test-'));
  const instanceId = `test-${process.pid}-${++counter}`;
  const keyId = 'test-key';
  const secret = 'test-secret-with:colon';
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    INSTANCE_LOCATOR: `v1:local:${instanceId}`,
    INSTANCE_KEY: `${keyId}:${secret}`,
    TOKEN_PROVIDER_ENABLED: 'true',
    LOG_LEVEL: 'warn',
    ...(options.https && { HTTPS_PORT: '0', TLS_CERT_FILE: CERT_FILE, TLS_KEY_FILE: KEY_FILE }),
    ...options.env,
  });
  const runtime = await openRuntime(config, 'embedded', { projectorThreadTestHooks: options.projectorThreadTestHooks });
  const server = await startServer(runtime);
  const baseUrl = `http://127.0.0.1:${server.httpPort}`;
  const token: TestServer['token'] = ({ sub, su, expiresIn = 3600 } = {}) =>
    jwt.sign(
      { instance: instanceId, iss: `api_keys/${keyId}`, ...(sub !== undefined && { sub }), ...(su && { su: true }) },
      secret,
      { algorithm: 'HS256', expiresIn },
    );
  const suToken = token({ su: true });
  return {
    server,
    runtime,
    baseUrl,
    httpsPort: server.httpsPort,
    dataDir,
    instanceId,
    keyId,
    secret,
    locator: `v1:local:${instanceId}`,
    token,
    chat: (path, version = 'v6') => `/services/chatkit/${version}/${instanceId}${path}`,
    async request(method, path, { body, rawBody, token: t = suToken, headers = {} } = {}) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: {
          ...(t && { authorization: `Bearer ${t}` }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        body: rawBody ?? (body !== undefined ? JSON.stringify(body) : undefined),
      });
      const text = await response.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: response.status, headers: response.headers, body: parsed as any, text };
    },
    async close() {
      await server.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
