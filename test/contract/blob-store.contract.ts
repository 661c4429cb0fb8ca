import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BlobStore } from '../../src/shared/ports/blob-store.port';

/**
 * The behaviour every BlobStore adapter must share, bound per adapter by a one-line spec.
 * Every test writes under its own random prefix and deletes what it wrote, so the suite also
 * runs against a shared server.
 */
export function blobStoreContract(name: string, make: () => Promise<{ store: BlobStore; cleanup(): Promise<void> }>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let cleanup: () => Promise<void>;
    let prefix: string;
    let written: string[];

    beforeEach(async () => {
      ({ store, cleanup } = await make());
      prefix = `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      written = [];
    });

    afterEach(async () => {
      try {
        for (const key of written) await store.delete(key);
      } finally {
        await cleanup();
      }
    });

    const key = (rest: string): string => {
      const k = `${prefix}/${rest}`;
      written.push(k);
      return k;
    };

    const read = async (k: string): Promise<{ bytes: Buffer; size: number; contentType: string } | null> => {
      const blob = await store.get(k);
      if (!blob) return null;
      const chunks: Buffer[] = [];
      for await (const chunk of blob.stream) chunks.push(chunk as Buffer);
      return { bytes: Buffer.concat(chunks), size: blob.size, contentType: blob.contentType };
    };

    /** A stream that yields `parts`, then fails. */
    const failing = (parts: Buffer[]): Readable =>
      Readable.from(
        (async function* () {
          for (const part of parts) yield part;
          throw new Error('source failed');
        })(),
      );

    it('stores a buffer and gives back the same bytes, size and content type', async () => {
      const k = key('a/one');
      const bytes = Buffer.from('{"hello":"world"}\n');
      expect(await store.put(k, bytes, { contentType: 'application/json' })).toEqual({ size: bytes.length });
      expect(await read(k)).toEqual({ bytes, size: bytes.length, contentType: 'application/json' });
      expect(await store.exists(k)).toBe(true);
    });

    it('stores a stream of many chunks, binary-safe', async () => {
      const k = key('stream');
      const parts = Array.from({ length: 40 }, () => randomBytes(64 * 1024 + 7));
      const all = Buffer.concat(parts);
      expect(await store.put(k, Readable.from(parts), { contentType: 'image/png' })).toEqual({ size: all.length });
      const got = await read(k);
      expect(got!.size).toBe(all.length);
      expect(got!.bytes.equals(all)).toBe(true);
      expect(got!.contentType).toBe('image/png');
    });

    it('stores an empty blob', async () => {
      const k = key('empty');
      expect(await store.put(k, Buffer.alloc(0), { contentType: 'text/plain; charset=utf-8' })).toEqual({ size: 0 });
      expect(await read(k)).toEqual({ bytes: Buffer.alloc(0), size: 0, contentType: 'text/plain; charset=utf-8' });
    });

    it('answers null and false for a key that holds nothing', async () => {
      expect(await store.get(`${prefix}/missing`)).toBeNull();
      expect(await store.exists(`${prefix}/missing`)).toBe(false);
    });

    it('replaces a blob written again under the same key', async () => {
      const k = key('again');
      await store.put(k, Buffer.from('first version'), { contentType: 'text/plain' });
      await store.put(k, Buffer.from('second'), { contentType: 'application/octet-stream' });
      expect(await read(k)).toEqual({ bytes: Buffer.from('second'), size: 6, contentType: 'application/octet-stream' });
    });

    it('deletes, and deleting a missing key is fine', async () => {
      const k = key('gone');
      await store.put(k, Buffer.from('x'), { contentType: 'text/plain' });
      await store.delete(k);
      expect(await store.get(k)).toBeNull();
      expect(await store.exists(k)).toBe(false);
      await store.delete(k);
      await store.delete(`${prefix}/never/written`);
    });

    it('keeps keys apart, including keys that prefix one another', async () => {
      const [a, ab, nested] = [key('a'), key('ab'), key('a.b/c')];
      await store.put(a, Buffer.from('A'), { contentType: 'text/plain' });
      await store.put(ab, Buffer.from('AB'), { contentType: 'text/plain' });
      await store.put(nested, Buffer.from('C'), { contentType: 'text/plain' });
      expect((await read(a))!.bytes.toString()).toBe('A');
      expect((await read(ab))!.bytes.toString()).toBe('AB');
      expect((await read(nested))!.bytes.toString()).toBe('C');
      await store.delete(a);
      expect((await read(ab))!.bytes.toString()).toBe('AB');
    });

    it('never shows part of a blob whose source failed: the key stays absent', async () => {
      const k = key('failed');
      await expect(store.put(k, failing([randomBytes(300_000)]), { contentType: 'text/plain' })).rejects.toThrow(
        'source failed',
      );
      expect(await store.get(k)).toBeNull();
      expect(await store.exists(k)).toBe(false);
    });

    it('keeps the previous blob whole when a replacing put fails', async () => {
      const k = key('kept');
      await store.put(k, Buffer.from('the original'), { contentType: 'text/plain' });
      await expect(store.put(k, failing([Buffer.from('partial')]), { contentType: 'image/gif' })).rejects.toThrow();
      expect(await read(k)).toEqual({ bytes: Buffer.from('the original'), size: 12, contentType: 'text/plain' });
    });

    it('serves concurrent reads of one blob', async () => {
      const k = key('shared');
      const bytes = randomBytes(200_000);
      await store.put(k, bytes, { contentType: 'application/octet-stream' });
      const all = await Promise.all([read(k), read(k), read(k)]);
      for (const got of all) expect(got!.bytes.equals(bytes)).toBe(true);
    });

    it('lets a reader give up part way (destroying the stream)', async () => {
      const k = key('abandoned');
      await store.put(k, randomBytes(1_000_000), { contentType: 'application/octet-stream' });
      const blob = await store.get(k);
      blob!.stream.destroy();
      expect(await store.exists(k)).toBe(true);
    });

    const listed = async (prefix: string): Promise<{ key: string; writtenAt: Date }[]> => {
      const all: { key: string; writtenAt: Date }[] = [];
      for await (const blob of store.list({ prefix })) all.push(blob);
      return all.sort((a, b) => a.key.localeCompare(b.key));
    };

    it('lists each key it holds once, with when its blob was written, and only under the prefix asked for', async () => {
      const [a, nested, deep] = [key('a'), key('b/c'), key('b/d/e')];
      const before = Date.now();
      await store.put(a, Buffer.from('first'), { contentType: 'text/plain' });
      await store.put(nested, Buffer.from('C'), { contentType: 'text/plain' });
      await store.put(deep, Buffer.alloc(0), { contentType: 'text/plain' });
      await store.put(a, Buffer.from('second'), { contentType: 'text/plain' });
      const after = Date.now();
      const all = await listed(prefix);
      expect(all.map((blob) => blob.key)).toEqual([a, nested, deep]);
      // File-system clocks may tick coarser than Date.now(): a second either side is "during the test".
      for (const { writtenAt } of all) {
        expect(writtenAt).toBeInstanceOf(Date);
        expect(writtenAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
        expect(writtenAt.getTime()).toBeLessThanOrEqual(after + 1_000);
      }
      expect((await listed(`${prefix}/b`)).map((blob) => blob.key)).toEqual([nested, deep]);
      expect(await listed(`${prefix}/none`)).toEqual([]);
      expect(await listed(`${prefix}/a/x`)).toEqual([]);
    });

    it('lists neither deleted blobs nor puts that failed', async () => {
      const [kept, gone, failed] = [key('kept'), key('gone'), key('failed')];
      await store.put(kept, Buffer.from('k'), { contentType: 'text/plain' });
      await store.put(gone, Buffer.from('g'), { contentType: 'text/plain' });
      await store.delete(gone);
      await expect(store.put(failed, failing([randomBytes(100_000)]), { contentType: 'text/plain' })).rejects.toThrow();
      expect((await listed(prefix)).map((blob) => blob.key)).toEqual([kept]);
    });

    it('lists every key when no prefix is given', async () => {
      const k = key('anywhere');
      await store.put(k, Buffer.from('x'), { contentType: 'text/plain' });
      let found = 0;
      for await (const blob of store.list()) if (blob.key === k) found++;
      expect(found).toBe(1);
    });

    it('removing abandoned writes leaves every stored blob whole', async () => {
      const k = key('whole');
      await store.put(k, Buffer.from('still here'), { contentType: 'text/plain' });
      await expect(store.put(key('broken'), failing([randomBytes(300_000)]), { contentType: 'text/plain' })).rejects.toThrow();
      // An hour back: on a shared server, younger leftovers may be puts other tests are running.
      expect(await store.removeAbandonedWrites(new Date(Date.now() - 3_600_000))).toEqual(expect.any(Number));
      expect(await read(k)).toEqual({ bytes: Buffer.from('still here'), size: 10, contentType: 'text/plain' });
    });

    it('refuses keys that could escape or are not well formed', async () => {
      for (const bad of ['', '../x', `${prefix}/../x`, '/abs', `${prefix}//x`, `${prefix}/.hidden`, `${prefix}/sp ace`, `${prefix}/`]) {
        await expect(store.put(bad, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toThrow('Invalid blob key');
        await expect(store.get(bad)).rejects.toThrow('Invalid blob key');
      }
    });
  });
}
