import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { chat, FaultLab, eventually, health, processEnv, sleep } from './process-client';
import { STORAGE_FAILURE_HOLD_MS } from '../../src/shared/application/storage-health';
import { describeAsRoot, fillVolume, mountTmpfs } from '../support/volumes';

/**
 * /health on a nearly full DATA_DIR volume (a small tmpfs, which needs root; without it the file
 * holds one passing test that says loudly that it did not run): small writes still fit there, a
 * large send does not. /health must say so for as long as it lasts, not only for the hold after
 * a failed append, and answer 200 again within seconds of room being freed.
 */
const SUITE = '/health on a nearly full DATA_DIR volume (tmpfs)';
/** Below what the largest request's append needs (about 2 MiB of WAL frames and pages), above what a small send needs. */
const LEFT_FREE = 512 * 1024;

describeAsRoot(SUITE, () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('stays 503 "disk is full" past the hold while small sends fit and a large request is refused, and 200 again once room is freed', async () => {
    const dir = join(lab.dataDir(), 'small-volume');
    mkdirSync(dir);
    mountTmpfs(dir, '24m');
    try {
      // A user's custom data may take most of a request's 1 MiB here: the largest append there is.
      const server = await lab.start('dist/src/main.js', processEnv(dir, { CUSTOM_DATA_MAX_BYTES: String(1024 * 1024) }));
      const acknowledged: string[] = [];
      const send = async (text: string) => {
        const answer = await chat(server.port, 'POST', '/rooms/nearly-full/messages', { text }, { sub: 'dora', version: 'v2' });
        if (answer.status === 201) acknowledged.push(text);
        return answer;
      };
      expect((await chat(server.port, 'POST', '/users', { id: 'dora', name: 'D' })).status).toBe(201);
      expect((await chat(server.port, 'POST', '/rooms', { id: 'nearly-full', name: 'n', user_ids: ['dora'] })).status).toBe(201);
      expect((await send('before')).status).toBe(201);
      expect((await health(server.port)).status).toBe(200);

      const filler = join(dir, 'filler.bin');
      fillVolume(filler, LEFT_FREE);
      // Before any send fails: a large one would, so /health says so already.
      const early = await health(server.port);
      expect(early.status).toBe(503);
      expect(early.body.storage).toMatchObject({ state: 'failing', error: expect.stringMatching(/^the disk is full: /) });

      expect((await send('small 1')).status).toBe(201);
      // Messages are small (5 KB inline); a user's custom data may take most of a request's 1 MiB.
      const largeUser = (id: string) => chat(server.port, 'POST', '/users', { id, name: id, custom_data: { blob: 'x'.repeat(900 * 1024) } });
      const large = await largeUser('large');
      expect(large.status).toBe(503);
      expect(large.body.error_description).toMatch(/not saved/i);
      expect((await send('small 2')).status).toBe(201);

      // Past the hold after the refused append the read-model probe would pass: /health must not.
      await sleep(STORAGE_FAILURE_HOLD_MS + 1_000);
      expect((await send('small 3')).status).toBe(201);
      const still = await health(server.port);
      expect(still.status).toBe(503);
      expect(still.body.storage).toMatchObject({ state: 'failing', error: expect.stringMatching(/^the disk is full: /) });
      expect(still.body.problems.join(' ')).toMatch(/storage refuses writes: the disk is full/);

      rmSync(filler);
      expect(await eventually(async () => (await health(server.port)).status === 200, 15_000)).toBe(true);
      expect((await largeUser('large')).status).toBe(201);
      const page = await chat(server.port, 'GET', '/rooms/nearly-full/messages?limit=100', undefined, { sub: 'dora', version: 'v2' });
      expect(page.body.map((m: { text: string }) => m.text).sort()).toEqual([...acknowledged].sort());
    } finally {
      await lab.stopAll();
      execFileSync('umount', ['-l', dir]);
    }
  }, 60_000);
});
