import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillScale } from '../bench/scale';
import { startProcess } from '../support/server-process';
import { chat, eventually, health, processEnv } from './process-client';

/** A port nothing listens on now: the start-up listener only opens on a configured port, not on 0. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/**
 * The embedded server folds what its read models missed before it serves. On a long log (a
 * first start, a rebuild) that takes a while, and all that time an orchestrator probes it: the
 * liveness route must answer, readiness must say `starting`, and a write must hear that nothing
 * was done, instead of a closed port.
 */
describe('the embedded server while it catches up with a long log at start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-startup-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers liveness, says starting on /health and refuses writes truthfully, then serves', async () => {
    // About 40,000 events behind every projection's checkpoint: several seconds of folding.
    await fillScale(dataDir, { instanceId: 'elsewhere', roomId: 'long', emptyRoomId: 'empty', users: 40_000, messages: 1_000, senders: 2 }, () => undefined);
    const port = await freePort();
    // Ready as soon as the projectors take their leases, which is before they fold.
    const server = await startProcess('dist/src/main.js', processEnv(dataDir, { PORT: String(port) }), /projector holds these projections now/);
    try {
      const live = await fetch(`http://127.0.0.1:${port}/health/live`);
      expect({ status: live.status, body: await live.json() }).toEqual({ status: 200, body: { status: 'alive' } });
      expect(await health(port)).toMatchObject({ status: 503, body: { status: 'starting' } });
      expect(await chat(port, 'POST', '/users', { id: 'early', name: 'Early' })).toMatchObject({
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
});
