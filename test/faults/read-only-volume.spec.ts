import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chat, eventually, FaultLab, health, processEnv } from './process-client';
import { asRoot, describeWhereSupported, NOT_ROOT } from '../support/volumes';

/**
 * The data directory's file system turns read-only under a running server, as Linux does it
 * to a volume after an error (`errors=remount-ro`): an ext4 image on a loop device, its error
 * triggered through sysfs. (`mount -o remount,ro` cannot do this: Linux refuses it with EBUSY
 * while a process holds files open for writing, as the server does.) Such a file system is
 * writable again only once unmounted and mounted anew, so the server is restarted on it then.
 * Without root, loop devices or ext4's error trigger, its test is registered as skipped, with
 * the reason.
 */
const SUITE = 'a data volume that turns read-only while running (real process, ext4 on a loop device)';
const unsupported = !asRoot
  ? NOT_ROOT
  : !existsSync('/dev/loop-control') || !existsSync('/sys/fs/ext4')
    ? 'no loop devices or no ext4 in this kernel'
    : null;

describeWhereSupported(unsupported, SUITE, () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('refuses writes with a prompt JSON 503 that says nothing was saved, keeps reading, reports storage in /health; a restart on the mended volume loses nothing acknowledged', async () => {
    const work = lab.dataDir();
    const image = join(work, 'volume.ext4');
    const dir = join(work, 'volume');
    mkdirSync(dir);
    execFileSync('truncate', ['-s', '64M', image]);
    execFileSync('mkfs.ext4', ['-q', '-O', '^has_journal', image]);
    const mount = () => execFileSync('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
    mount();
    const device = execFileSync('findmnt', ['-n', '-o', 'SOURCE', dir]).toString().trim();
    let mounted = true;
    try {
      const env = processEnv(dir);
      let server = await lab.start('dist/src/main.js', env);
      const as = { sub: 'dana', version: 'v2' as const };
      expect((await chat(server.port, 'POST', '/users', { id: 'dana', name: 'D' })).status).toBe(201);
      expect((await chat(server.port, 'POST', '/rooms', { id: 'ro', name: 'ro', user_ids: ['dana'] })).status).toBe(201);
      const acknowledged: string[] = [];
      const send = async (text: string) => {
        const answer = await chat(server.port, 'POST', '/rooms/ro/messages', { text }, as);
        if (answer.status === 201) acknowledged.push(text);
        return answer;
      };
      const texts = async () =>
        (await chat(server.port, 'GET', '/rooms/ro/messages?limit=100', undefined, as)).body.map((m: { text: string }) => m.text).sort();
      expect((await send('before')).status).toBe(201);
      // Read back before the volume fails: a read waits for the folds of the writes answered
      // before it, and a fold cannot write to a read-only volume. Without this the read below
      // races the fold of 'before' (under load it lost, and answered 503 projection_lag).
      expect(await texts()).toEqual(['before']);

      writeFileSync(`/sys/fs/ext4/${device.replace('/dev/', '')}/trigger_fs_error`, '1');
      for (const write of [
        () => send('while read-only'),
        () => chat(server.port, 'POST', '/users', { id: 'erin', name: 'E' }),
        () => chat(server.port, 'PUT', '/rooms/ro', { name: 'renamed' }),
      ]) {
        const started = Date.now();
        const refused = await write();
        // Not a timing: an answer that waited for the volume to come back would never arrive.
        expect(Date.now() - started).toBeLessThan(20_000);
        expect(refused.status).toBe(503);
        expect(refused.body.error).toBe('services/chatkit/unavailable/storage_unavailable');
        expect(refused.body.error_description).toMatch(/not saved/i);
      }
      const sick = await health(server.port);
      expect(sick.status).toBe(503);
      expect(sick.body.storage.state).toBe('failing');
      expect((await fetch(`http://127.0.0.1:${server.port}/health/live`)).status).toBe(200);
      // Reads keep working from what is stored.
      expect(await texts()).toEqual(['before']);
      expect((await chat(server.port, 'GET', '/users/dana')).status).toBe(200);

      // The operator mends the volume (unmount, check, mount) and starts the server again.
      await lab.stopAll();
      execFileSync('umount', [dir]);
      mounted = false;
      // e2fsck exits 1 when it corrected the error the file system recorded.
      expect(spawnSync('e2fsck', ['-fy', image], { stdio: 'ignore' }).status).toBeLessThanOrEqual(1);
      mount();
      mounted = true;
      server = await lab.start('dist/src/main.js', env);
      expect(await eventually(async () => (await health(server.port)).status === 200, 15_000)).toBe(true);
      expect((await send('after')).status).toBe(201);
      expect((await chat(server.port, 'POST', '/users', { id: 'erin', name: 'E' })).status).toBe(201);
      expect(await texts()).toEqual([...acknowledged].sort());
    } finally {
      await lab.stopAll();
      if (mounted) execFileSync('umount', ['-l', dir]);
    }
  }, 60_000);
});
