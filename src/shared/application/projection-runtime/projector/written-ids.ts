/**
 * Which document ids a pass may have written, as a fixed-size Bloom filter (2 MiB whatever the
 * log's length): "no" is certain, "maybe" is checked in the store.
 */
export class WrittenIds {
  private static readonly BITS = 1 << 24;
  private readonly bits = new Uint32Array(WrittenIds.BITS >>> 5);

  add(collection: string, id: string): void {
    const [h1, h2] = hashes(collection, id);
    for (let i = 0; i < 3; i++) {
      const bit = (h1 + i * h2) & (WrittenIds.BITS - 1);
      this.bits[bit >>> 5] |= 1 << (bit & 31);
    }
  }

  mayHold(collection: string, id: string): boolean {
    const [h1, h2] = hashes(collection, id);
    for (let i = 0; i < 3; i++) {
      const bit = (h1 + i * h2) & (WrittenIds.BITS - 1);
      if ((this.bits[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit FNV-1a hashes of collection and id (double hashing gives the filter's probes). */
function hashes(collection: string, id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < collection.length; i++) {
    const c = collection.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  a = Math.imul(a ^ 0xff, 0x01000193);
  b = Math.imul(b ^ 0xff, 0x5bd1e995);
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [a >>> 0, (b >>> 0) | 1];
}

/**
 * The collections a pass started empty (their projection never folded anything: no checkpoint,
 * so none of their documents was ever written, as documents and checkpoints commit together),
 * and the ids written into them since. A document of such a collection whose id was never
 * written is certainly absent: during a rebuild nearly every read would find nothing, and is
 * skipped.
 */
export class StartedEmpty {
  private readonly collections: ReadonlySet<string>;
  /** Only when some collection started empty (2 MiB). */
  private readonly written: WrittenIds | null;

  constructor(collections: Iterable<string> = []) {
    this.collections = new Set(collections);
    this.written = this.collections.size ? new WrittenIds() : null;
  }

  /** Certainly not in the store: its collection started empty and this pass never wrote it. */
  certainlyAbsent(collection: string, id: string): boolean {
    return this.collections.has(collection) && !this.written!.mayHold(collection, id);
  }

  /** This pass writes the document (put or delete). */
  noteWritten(collection: string, id: string): void {
    if (this.collections.has(collection)) this.written!.add(collection, id);
  }
}
