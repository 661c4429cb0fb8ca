/**
 * What Parley writes to disk is readable by its own account only: the event log and read
 * models with the WAL and shared-memory files SQLite makes beside them, blobs, the master key,
 * the lock, exports, and every directory holding them — under a umask that would let anyone
 * read whatever it did not make private itself (000), as `npm start` and the export CLI run.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import jwt from 'jsonwebtoken';
import { commandFor, ServerProcess, startProcess } from '../support/server-process';

const ROOT = join(__dirname, '..', '..');
const INSTANCE = 'modes';
const SECRET = 'modes-key-secret-3b8e1f';
const token = (claims: object) => jwt.sign({ instance: INSTANCE, iss: 'api_keys/k', ...claims }, SECRET, { algorithm: 'HS256', expiresIn: 600 });

/** Every file and directory under `dir` (itself included) with its permission bits, as `rel → 0oNNN`. */
function modesUnder(dir: string): Record<string, string> {
  const modes: Record<string, string> = {};
  const visit = (path: string) => {
    const stat = statSync(path);
    modes[relative(dir, path) || '.'] = (stat.mode & 0o777).toString(8).padStart(3, '0') + (stat.isDirectory() ? '/' : '');
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return modes;
}

/** The entries whose mode is not 700 (directories) or 600 (files). */
const notPrivate = (modes: Record<string, string>) =>
  Object.fromEntries(Object.entries(modes).filter(([, mode]) => mode !== '700/' && mode !== '600'));

describe('files and directories Parley writes are 0600 and 0700 whatever the umask', () => {
  let base: string;
  let dataDir: string;
  let server: ServerProcess | undefined;
  const env = () => ({ DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: `k:${SECRET}` });
  const start = (umask: string) => startProcess('dist/src/main.js', env(), /Parley is listening/, { umask });
  const call = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    fetch(`http://127.0.0.1:${server!.port}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token ?? token({ su: true })}`, ...(init.body !== undefined && { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const chat = (path: string) => `/services/chatkit/v6/${INSTANCE}${path}`;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'parley-modes-'));
    // Made by Parley itself, with its parent.
    dataDir = join(base, 'deployment', 'data');
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('creates DATA_DIR, the log, the read models (with their -wal and -shm), blobs, master.key and the lock private under umask 000', async () => {
    server = await start('000');
    expect((await call(chat('/users'), { method: 'POST', body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
    expect((await call(chat('/rooms'), { method: 'POST', body: { id: 'r1', name: 'r1' }, token: token({ sub: 'ann' }) })).status).toBe(201);
    const announced = await call(chat('/rooms/r1/attachments'), { method: 'POST', body: { content_type: 'text/plain', content_length: 5 }, token: token({ sub: 'ann' }) });
    expect(announced.status).toBe(201);
    const uploaded = await fetch((await announced.json()).upload_url, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(uploaded.status).toBe(204);

    // Read while the server runs: SQLite's -wal and -shm files exist only then.
    const modes = modesUnder(dataDir);
    for (const name of ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm', 'read-models.sqlite', 'read-models.sqlite-wal', 'read-models.sqlite-shm', 'master.key', 'parley.lock']) {
      expect(modes[name]).toBe('600');
    }
    expect(modes.blobs).toBe('700/');
    const blobFiles = Object.keys(modes).filter((name) => name.startsWith('blobs/') && !modes[name].endsWith('/') && !name.includes('.tmp'));
    expect(blobFiles).toHaveLength(1);
    expect(notPrivate(modes)).toEqual({});
    // The parent Parley made on the way is private too.
    expect(modesUnder(join(base, 'deployment'))['.']).toBe('700/');
  });

  it('writes an export private under umask 000', async () => {
    server = await start('000');
    const out = join(base, 'exports', 'modes-1');
    const finished = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(...commandFor(join(ROOT, 'dist/src/cli/export.js'), '000', [INSTANCE, '--out', out]), {
        env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        cwd: ROOT,
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(finished).toEqual({ code: 0, stderr: '' });
    const modes = modesUnder(out);
    for (const name of ['events.ndjson', 'blobs.ndjson', 'manifest.json']) expect(modes[name]).toBe('600');
    expect(Object.keys(modes).filter((name) => name.startsWith('blobs/') && !modes[name].endsWith('/'))).toHaveLength(1);
    expect(notPrivate(modes)).toEqual({});
    expect(modesUnder(join(base, 'exports'))['.']).toBe('700/');
  });

  it('makes a DATA_DIR, log and read models an earlier version left readable by others private at start', async () => {
    for (const [name, mode] of Object.entries(modesUnder(dataDir))) {
      if (name === '.' || name === 'events.sqlite' || name === 'read-models.sqlite') chmodSync(join(dataDir, name), mode.endsWith('/') ? 0o755 : 0o644);
    }
    server = await start('022');
    expect((await call(chat('/users/ann'))).status).toBe(200);
    expect(notPrivate(modesUnder(dataDir))).toEqual({});
  });
});
