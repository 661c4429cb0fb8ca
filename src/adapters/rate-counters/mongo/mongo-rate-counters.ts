import { Collection, MongoClient, MongoServerError } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { RateCounters, stepBucket, TokenBucket, WindowCount, windowOf } from '../../../shared/ports/rate-counter.port';

interface WindowDoc {
  _id: string;
  count: number;
  expiresAt: Date;
}

interface BucketDoc {
  _id: string;
  tokens: number;
  atMs: number;
  /** Bumped by every take: a take writes only over the state it read (compare and set). */
  v: number;
  expiresAt: Date;
}

const DUPLICATE_KEY = 11000;
/** Compare-and-set attempts on one bucket before giving up (contention only: each retry reads the newer state). */
const MAX_ATTEMPTS = 50;

const isDuplicateKey = (error: unknown) => error instanceof MongoServerError && error.code === DUPLICATE_KEY;

/**
 * Counters in MongoDB, shared by every API process of a deployment (used when MONGODB_URI is
 * set). A window is one document per key and window, counted with an atomic upserting `$inc`;
 * a bucket is one document per key, moved by compare and set on its version so the refill
 * arithmetic is the port's own (`stepBucket`). A TTL index removes windows once they end and
 * buckets once they would be full again (a missing bucket is a full one).
 */
export class MongoRateCounters implements RateCounters {
  static async connect(uri: string, dbName = 'parley'): Promise<MongoRateCounters> {
    const shared = await acquireMongoClient(uri);
    const counters = new MongoRateCounters(shared.client, dbName, shared.release);
    try {
      await Promise.all([
        counters.windows.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
        counters.buckets.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }),
      ]);
    } catch (error) {
      await shared.release().catch(() => undefined);
      throw error;
    }
    return counters;
  }

  private readonly windows: Collection<WindowDoc>;
  private readonly buckets: Collection<BucketDoc>;

  /** A client handed in is closed with the counters unless `release` says otherwise. */
  constructor(
    private readonly client: MongoClient,
    dbName = 'parley',
    private readonly release: () => Promise<void> = () => client.close(),
  ) {
    const db = client.db(dbName);
    this.windows = db.collection<WindowDoc>('rate_limit_windows');
    this.buckets = db.collection<BucketDoc>('rate_limit_buckets');
  }

  async hit(key: string, windowMs: number, nowMs: number): Promise<WindowCount> {
    const { id, endMs } = windowOf(key, windowMs, nowMs);
    const increment = () =>
      this.windows.findOneAndUpdate(
        { _id: id },
        { $inc: { count: 1 }, $setOnInsert: { expiresAt: new Date(endMs) } },
        { upsert: true, returnDocument: 'after' },
      );
    // Two first hits may both try to insert; the loser's retry finds the document and increments it.
    const doc = await increment().catch((error: unknown) => {
      if (isDuplicateKey(error)) return increment();
      throw error;
    });
    return { count: doc!.count, resetAtMs: endMs };
  }

  async take(key: string, bucket: TokenBucket, nowMs: number): Promise<number> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.buckets.findOne({ _id: key });
      const next = stepBucket(current, bucket, nowMs);
      const fullAgainMs = ((bucket.capacity - next.tokens) / bucket.perSecond) * 1000;
      const state = { tokens: next.tokens, atMs: next.atMs, expiresAt: new Date(next.atMs + fullAgainMs + 1000) };
      if (current) {
        const moved = await this.buckets.updateOne({ _id: key, v: current.v }, { $set: { ...state, v: current.v + 1 } });
        if (moved.modifiedCount === 1) return next.waitMs;
      } else {
        try {
          await this.buckets.insertOne({ _id: key, ...state, v: 1 });
          return next.waitMs;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
      }
    }
    throw new Error(`Rate bucket "${key}" stayed contended for ${MAX_ATTEMPTS} attempts`);
  }

  async close(): Promise<void> {
    await this.release();
  }
}
