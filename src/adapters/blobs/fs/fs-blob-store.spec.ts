import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DomainError } from '../../../shared/domain/errors';
import { FsBlobStore } from './fs-blob-store';
import { asRoot, fillVolume, mountTmpfs } from '../../../../test/support/volumes';

/** A temporary file as an upload in progress (or one a crash cut short) leaves it, last written `ageMs` ago. */
function leaveTemporary(dir: string, name: string, ageMs: number): void {
  const path = join(dir, '.tmp', name);
  writeFileSync(path, name);
  const at = new Date(Date.now() - ageMs);
  utimesSync(path, at, at);
}

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
    leaveTemporary(dir, 'old.part', 48 * 3600 * 1000);
    leaveTemporary(dir, 'recent.part', 0);
    await FsBlobStore.open(dir);
    expect(readdirSync(join(dir, '.tmp'))).toEqual(['recent.part']);
  });

  it('removes abandoned temporaries older than asked while it runs, and never lists them', async () => {
    const store = await FsBlobStore.open(dir);
    await store.put('acme/att5/u1', Buffer.from('kept'), { contentType: 'text/plain' });
    leaveTemporary(dir, 'killed-mid-put.part', 2 * 3600 * 1000);
    leaveTemporary(dir, 'still-writing.part', 0);
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
