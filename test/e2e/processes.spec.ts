import jwt from 'jsonwebtoken';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, ServerProcess } from '../support/server-process';

const instance = 'proc';
const secret = 'process-secret';
const env = (dataDir: string) => ({
  DATA_DIR: dataDir,
  INSTANCE_LOCATOR: `v1:local:${instance}`,
  INSTANCE_KEY: `k:${secret}`,
});
const su = () => jwt.sign({ instance, iss: 'api_keys/k', su: true }, secret, { algorithm: 'HS256', expiresIn: 600 });
const call = (port: number, method: string, path: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}/services/chatkit/v6/${instance}${path}`, {
    method,
    headers: { authorization: `Bearer ${su()}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('Parley as real processes', () => {
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'parley-proc-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('keeps every acknowledged write across a crash (SIGKILL) of the embedded server', async () => {
    const dir = dataDir();
    const first = await startProcess('dist/src/main.js', env(dir));
    running.push(first);
    const ids = Array.from({ length: 60 }, (_, i) => `crash-${i}`);
    const statuses = await Promise.all(ids.map((id) => call(first.port, 'POST', '/users', { id, name: id }).then((r) => r.status)));
    expect(statuses.every((s) => s === 201)).toBe(true);
    await first.stop('SIGKILL');

    const second = await startProcess('dist/src/main.js', env(dir));
    running.push(second);
    const found = await call(second.port, 'GET', `/users_by_ids?${ids.map((id) => `id=${id}`).join('&')}`);
    expect((await found.json()).map((u: { id: string }) => u.id)).toEqual(ids);
  }, 60_000);

  it('runs as an API process plus a projector worker, and a write is readable as soon as it is acknowledged', async () => {
    const dir = dataDir();
    const worker = await startProcess('dist/src/main.projector.js', env(dir), /projector worker running/);
    running.push(worker);
    const api = await startProcess('dist/src/main.api.js', env(dir));
    running.push(api);
    for (let i = 0; i < 5; i++) {
      expect((await call(api.port, 'POST', '/users', { id: `sep-${i}`, name: 'S' })).status).toBe(201);
      expect((await call(api.port, 'GET', `/users/sep-${i}`)).status).toBe(200);
    }
    // Version-dispatched routes through the compiled build (design-type metadata differs from ts-jest's).
    const room = await call(api.port, 'POST', '/rooms', { id: 'built', name: 'built', user_ids: ['sep-0'] });
    expect(room.status).toBe(201);
    expect((await room.json()).member_user_ids).toEqual(['sep-0']);
    const health = await fetch(`http://127.0.0.1:${api.port}/health`);
    expect(health.status).toBe(200);
  }, 60_000);
});
