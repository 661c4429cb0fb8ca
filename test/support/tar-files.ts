import type { Readable } from 'node:stream';

// tar-stream 2 ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tar = require('tar-stream');

/** The files of a tar archive (an instance archive the operator API sent), by name, in their order. */
export async function untar(archive: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.on('entry', (header: { name: string }, stream: Readable, next: () => void) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      files.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  await new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
    extract.end(archive);
  });
  return files;
}

/** A tar archive of the given entries, in order (`type`/`linkname` for links, to test refusals). */
export async function makeTar(entries: readonly { name: string; data?: Buffer | string; type?: string; linkname?: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const { data, ...header } of entries) pack.entry(header, data ?? '');
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
