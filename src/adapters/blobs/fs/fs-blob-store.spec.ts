import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from './fs-blob-store';

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

  it('drops directories a delete leaves empty', async () => {
    const store = await FsBlobStore.open(dir);
    await store.put('acme/att3/u1', Buffer.from('x'), { contentType: 'text/plain' });
    await store.delete('acme/att3/u1');
    expect(existsSync(join(dir, 'acme'))).toBe(false);
    expect(existsSync(dir)).toBe(true);
  });
});
