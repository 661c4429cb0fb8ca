import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { chat, FaultLab, eventually, health, processEnv } from './process-client';
import { describeAsRoot, fillVolume, mountTmpfs } from '../support/volumes';

/**
 * /health on a nearly full DATA_DIR volume (a small tmpfs, which needs root;
 * without it the file registers its test as skipped, with the reason): readiness is 503
 * only while writes actually fail. Once room is freed and writes are acknowledged again, the
 * process is ready, and the little room left is a warning (in /health's body and a metric),
 * not a reason for orchestrators to take a serving process out.
 */
const SUITE = '/health on a nearly full DATA_DIR volume (tmpfs)';
const MIB = 1024 * 1024;
const METRICS_TOKEN = 'metrics-secret';

describeAsRoot(SUITE, () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('is 503 while sends fail, 200 with a low-space warning once they are acknowledged again, and drops the warning when room is back', async () => {
    const dir = join(lab.dataDir(), 'small-volume');
    mkdirSync(dir);
    mountTmpfs(dir, '24m');
    try {
      const server = await lab.start('dist/src/main.js', processEnv(dir, { STORAGE_LOW_SPACE_BYTES: String(8 * MIB), METRICS_TOKEN }));
      const acknowledged: string[] = [];
      let sent = 0;
      const send = async () => {
        const text = `message ${sent++} ${'x'.repeat(4000)}`;
        const answer = await chat(server.port, 'POST', '/rooms/nearly-full/messages', { text }, { sub: 'dora', version: 'v2' });
        if (answer.status === 201) acknowledged.push(text);
        return answer;
      };
      const lowSpaceMetric = async () => {
        const response = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
        return /^parley_event_log_low_space (\d)$/m.exec(await response.text())?.[1];
      };
      expect((await chat(server.port, 'POST', '/users', { id: 'dora', name: 'D' })).status).toBe(201);
      expect((await chat(server.port, 'POST', '/rooms', { id: 'nearly-full', name: 'n', user_ids: ['dora'] })).status).toBe(201);
      expect((await send()).status).toBe(201);
      const roomy = await health(server.port);
      expect(roomy.status).toBe(200);
      expect(roomy.body.warnings).toEqual([]);
      expect(roomy.body.storage).toMatchObject({ state: 'ok', low_space: false, limited_by: 'volume' });
      expect(await lowSpaceMetric()).toBe('0');

      // A full volume: sends are refused "not saved", and /health says storage refuses writes.
      const filler = join(dir, 'filler.bin');
      fillVolume(filler);
      let refused = null;
      for (let n = 0; n < 500 && !refused; n++) {
        const answer = await send();
        if (answer.status !== 201) refused = answer;
      }
      expect(refused).toMatchObject({ status: 503, body: { error_description: expect.stringMatching(/not saved/i) } });
      const failing = await health(server.port);
      expect(failing.status).toBe(503);
      expect(failing.body.storage).toMatchObject({ state: 'failing', error: expect.stringMatching(/disk is full/) });
      expect(failing.body.problems.join(' ')).toMatch(/storage refuses writes/);

      // About 2.5 MiB freed: sends are acknowledged again, and the process is ready again,
      // with a warning: room for a hypothetical 1 MiB append is no reason to refuse traffic.
      truncateSync(filler, statSync(filler).size - 2.5 * MIB);
      expect(await eventually(async () => (await send()).status === 201, 15_000)).toBe(true);
      expect(await eventually(async () => (await health(server.port)).status === 200, 20_000)).toBe(true);
      const warned = await health(server.port);
      expect(warned.body.problems).toEqual([]);
      expect(warned.body.storage).toMatchObject({ state: 'ok', low_space: true });
      expect(warned.body.storage.space_left_bytes).toBeLessThan(8 * MIB);
      expect(warned.body.warnings).toEqual([expect.stringMatching(/^the event log's volume leaves [\d.]+ MiB for the event log, below STORAGE_LOW_SPACE_BYTES \(8\.0 MiB\)/)]);
      expect(await lowSpaceMetric()).toBe('1');
      expect((await send()).status).toBe(201);

      rmSync(filler);
      expect(await eventually(async () => (await health(server.port)).body?.warnings?.length === 0, 10_000)).toBe(true);
      expect(await lowSpaceMetric()).toBe('0');
      const page = await chat(server.port, 'GET', '/rooms/nearly-full/messages?limit=100', undefined, { sub: 'dora', version: 'v2' });
      expect(page.body.map((m: { text: string }) => m.text).sort()).toEqual([...acknowledged].slice(-100).sort());
    } finally {
      await lab.stopAll();
      execFileSync('umount', ['-l', dir]);
    }
  }, 90_000);
});
