import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DomainError } from '../../../shared/domain/errors';
import { FsBlobStore } from './fs-blob-store';
import { asRoot, fillVolume, mountTmpfs } from '../../../../test/support/volumes';

describe('FsBlobStore on disk', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'parley-fs-blob-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each blob as one file under its key and leaves no temporary behind', async () => {
    const store = await FsBlobStore.open(dir);
    await store.put('acme/att1/u1', Buffer.from('bytes'), { contentType: 'text/plain' });
    expect(existsSync(join(dir, 'acme', 'att1', 'u1'))).toBe(true);
    expect(readdirSync(join(dir, '.tmp'))).toEqual([]);
  });

  it('removes the temporary of a failed put and writes nothing under the final name', async () => {
    const store = await FsBlobStore.open(dir);
    const source = Readable.from(
      (async function* () {
        yield Buffer.from('half');
        throw new Error('client went away');
      })(),
    );
    await expect(store.put('acme/att2/u1', source, { contentType: 'text/plain' })).rejects.toThrow('client went away');
    expect(existsSync(join(dir, 'acme', 'att2', 'u1'))).toBe(false);
    expect(readdirSync(join(dir, '.tmp'))).toEqual([]);
  });

  it('sweeps temporaries a crash left behind once they are old, and keeps recent ones', async () => {
    await FsBlobStore.open(dir);
    const old = join(dir, '.tmp', 'old.part');
    const recent = join(dir, '.tmp', 'recent.part');
    writeFileSync(old, 'x');
    writeFileSync(recent, 'y');
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000);
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    await FsBlobStore.open(dir);
    expect(readdirSync(join(dir, '.tmp'))).toEqual(['recent.part']);
  });

  it('removes abandoned temporaries older than asked while it runs, and never lists them', async () => {
    const store = await FsBlobStore.open(dir);
    await store.put('acme/att5/u1', Buffer.from('kept'), { contentType: 'text/plain' });
    const old = join(dir, '.tmp', 'killed-mid-put.part');
    const live = join(dir, '.tmp', 'still-writing.part');
    writeFileSync(old, 'x');
    writeFileSync(live, 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(old, twoHoursAgo, twoHoursAgo);
    const keys: string[] = [];
    for await (const blob of store.list()) keys.push(blob.key);
    expect(keys).toEqual(['acme/att5/u1']);
    expect(await store.removeAbandonedWrites(new Date(Date.now() - 3600 * 1000))).toBe(1);
    expect(readdirSync(join(dir, '.tmp'))).toEqual(['still-writing.part']);
    expect(await store.exists('acme/att5/u1')).toBe(true);
  });

  it('drops directories a delete leaves empty', async () => {
    const store = await FsBlobStore.open(dir);
    await store.put('acme/att3/u1', Buffer.from('x'), { contentType: 'text/plain' });
    await store.delete('acme/att3/u1');
    expect(existsSync(join(dir, 'acme'))).toBe(false);
    expect(existsSync(dir)).toBe(true);
  });

  // A real full disk (a small tmpfs) as root; otherwise a temporaries directory the store may not write.
  it(`answers a put the storage refuses (${asRoot ? 'a full disk' : 'no write permission'}) with a 503 that says the file was not saved, and stores again once room is freed`, async () => {
    const root = join(dir, 'blobs');
    if (asRoot) {
      execFileSync('mkdir', [root]);
      mountTmpfs(root, '64k');
    }
    try {
      const store = await FsBlobStore.open(root);
      if (asRoot) fillVolume(join(root, 'filler'));
      else chmodSync(join(root, '.tmp'), 0o500);
      const refused = await store.put('acme/att4/u1', Buffer.alloc(16 * 1024, 2), { contentType: 'text/plain' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({ status: 503, code: 'unavailable/storage_unavailable' });
      expect((refused as DomainError).description).toMatch(
        asRoot ? /^The file was not saved: the disk is full; it is safe to retry$/ : /^The file was not saved: the blob store could not be written \(EACCES\)/,
      );
      expect(existsSync(join(root, 'acme', 'att4', 'u1'))).toBe(false);
      if (asRoot) unlinkSync(join(root, 'filler'));
      else chmodSync(join(root, '.tmp'), 0o700);
      await store.put('acme/att4/u1', Buffer.alloc(16 * 1024, 2), { contentType: 'text/plain' });
      const stored = await store.get('acme/att4/u1');
      const chunks: Buffer[] = [];
      for await (const chunk of stored!.stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks)).toEqual(Buffer.alloc(16 * 1024, 2));
    } finally {
      if (asRoot) execFileSync('umount', [root]);
    }
  });
});
