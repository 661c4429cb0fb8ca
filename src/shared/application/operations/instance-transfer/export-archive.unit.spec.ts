import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ArchiveTooLargeError, packExport, unpackExport } from './export-archive';
import { ImportSourceError } from './import-instance';
import { makeTar, untar } from '../../../../../test/support/tar-files';

const bytesOf = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};


describe('instance archives (a tar of an export directory)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'parley-archive-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const files = (dir: string) =>
    Object.fromEntries(
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => [join(e.parentPath, e.name).slice(dir.length + 1), readFileSync(join(e.parentPath, e.name), 'utf8')]),
    );

  it('packs every file of the export, the manifest last, and unpacks them as they were (long blob keys included)', async () => {
    const dir = join(root, 'export');
    const key = `acme/${'k'.repeat(120)}/data.json`;
    mkdirSync(join(dir, 'blobs', 'acme', 'k'.repeat(120)), { recursive: true });
    writeFileSync(join(dir, 'blobs', ...key.split('/')), '{"x":1}');
    writeFileSync(join(dir, 'blobs.ndjson'), `{"key":"${key}"}\n`);
    writeFileSync(join(dir, 'events.ndjson'), '{"type":"InstanceCreated"}\n');
    writeFileSync(join(dir, 'manifest.json'), '{"format":"parley-instance-export"}');
    const archive = await bytesOf(packExport(dir));

    expect([...(await untar(archive)).keys()]).toEqual([`blobs/${key}`, 'blobs.ndjson', 'events.ndjson', 'manifest.json']);

    const out = join(root, 'out');
    expect(await unpackExport(Readable.from([archive]), out, archive.length)).toEqual({ bytes: archive.length });
    expect(files(out)).toEqual(files(dir));
  });

  it('refuses an archive over the cap, and anything but an export: entries elsewhere, links, twice the same file, not a tar', async () => {
    const ok = await makeTar([{ name: 'manifest.json', data: '{}' }]);
    await expect(unpackExport(Readable.from([ok]), join(root, 'a'), ok.length - 1)).rejects.toThrow(ArchiveTooLargeError);
    const refused: Buffer[] = [
      await makeTar([{ name: '../escape', data: 'x' }]),
      await makeTar([{ name: 'blobs/../../escape', data: 'x' }]),
      await makeTar([{ name: '/etc/escape', data: 'x' }]),
      await makeTar([{ name: 'blobs/acme/link', type: 'symlink', linkname: '/etc/passwd' }]),
      await makeTar([{ name: 'events.ndjson' }, { name: 'events.ndjson' }]),
      Buffer.from('not a tar at all'.repeat(64)),
    ];
    for (const [i, archive] of refused.entries()) {
      await expect(unpackExport(Readable.from([archive]), join(root, `r${i}`), 1e6)).rejects.toThrow(ImportSourceError);
    }
    expect(existsSync(join(root, 'escape'))).toBe(false);
  });
});
