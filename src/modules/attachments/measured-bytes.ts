import { createHash, Hash } from 'node:crypto';
import { Readable, Transform, TransformCallback } from 'node:stream';

export interface Measurement {
  readonly size: number;
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
}

/**
 * Passes bytes through on their way to the blob store, counting and hashing them. It fails as
 * soon as more than `max` bytes arrive, and at the end when `exact` is set and fewer arrived,
 * so the blob store never commits a body of the wrong size. The source is not destroyed on
 * such a failure: the route can still answer before the connection goes.
 */
export class MeasuredBytes extends Transform {
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private result: Measurement | null = null;

  constructor(
    source: Readable,
    private readonly limits: {
      readonly max: number;
      readonly exact?: number;
      readonly tooMany: (max: number) => Error;
      readonly wrongSize?: (size: number) => Error;
    },
  ) {
    super();
    // A failure may come before anyone reads (a short body ends while the store still opens its
    // file): it is kept on the stream and thrown to the reader, not raised as an unhandled event.
    this.on('error', () => undefined);
    source.on('error', (error) => this.destroy(error));
    source.pipe(this);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.max) return done(this.limits.tooMany(this.limits.max));
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.limits.exact !== undefined && this.bytes !== this.limits.exact) {
      return done(this.limits.wrongSize ? this.limits.wrongSize(this.bytes) : new Error('wrong size'));
    }
    this.result = { size: this.bytes, sha256: this.hash.digest('hex') };
    done();
  }

  /** Available once the stream has been read to its end. */
  get measurement(): Measurement {
    if (!this.result) throw new Error('The bytes have not all been read yet');
    return this.result;
  }

  /** Reads everything without keeping it (e.g. to compare a repeated upload). */
  async drain(): Promise<Measurement> {
    for await (const _ of this) {
      // counted and hashed on the way
    }
    return this.measurement;
  }
}
