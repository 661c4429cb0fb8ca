import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillScale } from '../bench/scale';
import { startProcess } from '../support/server-process';
import { chat, eventually, health, processEnv } from './process-client';
import { freePort } from '../support/free-port';

/**
 * The embedded server folds what its read models missed before it serves. On a long log (a
 * first start, a rebuild) that takes a while, and all that time an orchestrator probes it: the
 * liveness route must answer, readiness must say `starting`, and a write must hear that nothing
 * was done, instead of a closed port.
 */
describe('the embedded server while it catches up with a long log at start', () => {
  const dataDirs: string[] = [];
  afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A data directory whose log holds about 40,000 events no projection has folded: several seconds of folding. */
  const longLog = async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-startup-'));
    dataDirs.push(dataDir);
    await fillScale(dataDir, { instanceId: 'elsewhere', roomId: 'long', emptyRoomId: 'empty', users: 40_000, messages: 1_000, senders: 2 }, () => undefined);
    return dataDir;
  };

  it('answers liveness, says starting on /health and refuses writes truthfully, then serves', async () => {
    const dataDir = await longLog();
    // The start-up listener opens only on a configured port, not on 0.
    const port = await freePort();
    // Ready as soon as the projectors take their leases, which is before they fold.
    const server = await startProcess('dist/src/main.js', processEnv(dataDir, { PORT: String(port) }), /projector holds these projections now/);
    try {
      // All three at once, so they arrive while it folds.
      const [live, ready, write] = await Promise.all([
        fetch(`http://127.0.0.1:${port}/health/live`).then(async (r) => ({ status: r.status, body: await r.json() })),
        health(port),
        chat(port, 'POST', '/users', { id: 'early', name: 'Early' }),
      ]);
      expect(live).toEqual({ status: 200, body: { status: 'alive' } });
      expect(ready).toMatchObject({ status: 503, body: { status: 'starting' } });
      expect(write).toMatchObject({
        status: 503,
        body: { error: 'services/chatkit/unavailable/starting', error_description: expect.stringContaining('nothing was changed') },
      });

      // Once caught up, the server itself answers: ready, and writes are acknowledged.
      expect(await eventually(async () => (await health(port)).status === 200, 60_000)).toBe(true);
      expect(await chat(port, 'POST', '/users', { id: 'later', name: 'Later' })).toMatchObject({ status: 201 });
      expect(await chat(port, 'GET', '/users/early')).toMatchObject({ status: 404 });
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('stops with exit code 0 on SIGTERM while it folds, saying so', async () => {
    const server = await startProcess('dist/src/main.js', processEnv(await longLog(), { PORT: String(await freePort()) }), /projector holds these projections now/);
    let stderr = '';
    server.child.stderr!.on('data', (d) => (stderr += String(d)));
    const exited = new Promise<[number | null, string | null]>((resolve) => server.child.once('exit', (code, signal) => resolve([code, signal])));
    server.child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(stderr).toContain('Parley stopped on SIGTERM while starting, before serving anything');
  }, 60_000);
});
