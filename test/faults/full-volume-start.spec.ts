import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRuntime } from '../../src/app/runtime';
import { loadConfig } from '../../src/config/config';
import { describeAsRoot, fillVolume, mountTmpfs } from '../support/volumes';

/**
 * A restart on a DATA_DIR volume that filled up or went read-only while the server was down: the
 * start must say so and name the directory, not "disk I/O error". A real full volume
 * is a small tmpfs, which needs root; without it its test is registered as skipped, with the
 * reason.
 */
const SUITE = 'a start on a full or read-only DATA_DIR volume (tmpfs)';

describeAsRoot(SUITE, () => {
  let work: string;
  let volume: string;
  let dataDir: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'parley-full-start-'));
    volume = join(work, 'volume');
    dataDir = join(volume, 'data');
    mkdirSync(volume);
    // Room for a fresh start's files, WALs included (about 4 MB with every read model), with some to spare.
    mountTmpfs(volume, '16m');
  });
  afterAll(() => {
    execFileSync('umount', [volume]);
    rmSync(work, { recursive: true, force: true });
  });

  it('stops with an error naming DATA_DIR and the full volume, leaves no lock behind, starts once room is freed, and names a read-only volume too', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', INSTANCE_LOCATOR: 'v1:local:full', INSTANCE_KEY: 'k:full-secret' });
    const first = await openRuntime(config, 'embedded');
    await first.close();

    const filler = join(volume, 'filler');
    fillVolume(filler);
    await expect(openRuntime(config, 'embedded')).rejects.toThrow(
      new RegExp(`^DATA_DIR ${dataDir} is on a full volume \\(\\d+ bytes free\\): free space there and start again`),
    );
    expect(existsSync(join(dataDir, 'parley.lock'))).toBe(false);

    unlinkSync(filler);
    const again = await openRuntime(config, 'embedded');
    await again.close();

    execFileSync('mount', ['-o', 'remount,ro', volume]);
    try {
      await expect(openRuntime(config, 'embedded')).rejects.toThrow(
        new RegExp(`^DATA_DIR ${dataDir} is on a read-only volume: mount it read-write and start again`),
      );
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', volume]);
    }
  }, 30_000);
});
