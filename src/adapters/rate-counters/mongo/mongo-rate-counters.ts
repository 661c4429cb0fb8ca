import { Db, Document, MongoClient, MongoServerError } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { RateCounters, TokenBucket, WindowCount, windowOf } from '../../../shared/ports/rate-counter.port';

const WINDOWS = 'rate_limit_windows';
const BUCKETS = 'rate_limit_buckets';
const DUPLICATE_KEY = 11000;

/**
 * How long one counter call may take, server selection and a busy pool included: a request
 * waits for its rate limit at most this long, then the caller serves it without one.
 */
export const RATE_COUNTER_BUDGET_MS = 500;

const isDuplicateKey = (error: unknown) => error instanceof MongoServerError && error.code === DUPLICATE_KEY;

/**
 * One step of the port's token bucket (`stepBucket`, whose arithmetic this repeats operation for
 * operation, so both adapters answer alike) as an update the server applies to the stored
 * `{tokens, atMs}`, or to nothing yet (a full bucket): refill for the time since `atMs` (never
 * backwards), take a token if one is whole, and say how long the caller waits (`waitMs`).
 */
const takeUpdate = ({ capacity, perSecond }: TokenBucket, nowMs: number): Document[] => {
  const stored = { $ne: [{ $type: '$atMs' }, 'missing'] };
  const elapsedMs = { $max: [0, { $subtract: [nowMs, '$atMs'] }] };
  const refilled = { $min: [capacity, { $add: ['$tokens', { $multiply: [{ $divide: [elapsedMs, 1000] }, perSecond] }] }] };
  const whole = { $gte: ['$available', 1] };
  return [
    { $set: { available: { $cond: [stored, refilled, capacity] }, atMs: { $cond: [stored, { $max: ['$atMs', nowMs] }, nowMs] } } },
    {
      $set: {
        tokens: { $cond: [whole, { $subtract: ['$available', 1] }, '$available'] },
        waitMs: { $cond: [whole, 0, { $max: [1, { $ceil: { $multiply: [{ $divide: [{ $subtract: [1, '$available'] }, perSecond] }, 1000] } }] }] },
      },
    },
    // Removed by TTL once full again (a missing bucket is a full one).
    { $set: { expiresAt: { $toDate: { $add: ['$atMs', { $multiply: [{ $divide: [{ $subtract: [capacity, '$tokens'] }, perSecond] }, 1000] }, 1000] } } } },
    // `v`: the compare-and-set version of buckets written before the update did the arithmetic.
    { $unset: ['available', 'v'] },
  ];
};

/**
 * Counters in MongoDB, shared by every API process of a deployment (used when MONGODB_URI is
 * set). Each call is one atomic upserting `findAndModify` on the key's document: a window is
 * counted with `$inc`, a bucket moved by a pipeline update that does the refill arithmetic on
 * the server, so concurrent callers never retry each other out. A TTL index removes windows
 * once they end and buckets once they would be full again. Every call is bounded by a budget
 * (`RATE_COUNTER_BUDGET_MS`) on the client and on the server (`maxTimeMS`): an unreachable or
 * stalled MongoDB answers an error within it, never a wait.
 */
export class MongoRateCounters implements RateCounters {
  static async connect(uri: string, dbName = 'parley', options: { budgetMs?: number } = {}): Promise<MongoRateCounters> {
    const shared = await acquireMongoClient(uri);
    const counters = new MongoRateCounters(shared.client, dbName, shared.release, options.budgetMs);
    try {
      await Promise.all(
        [WINDOWS, BUCKETS].map((name) => counters.db.collection(name).createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 })),
      );
    } catch (error) {
      await shared.release().catch(() => undefined);
      throw error;
    }
    return counters;
  }

  private readonly db: Db;

  /** A client handed in is closed with the counters unless `release` says otherwise. */
  constructor(
    private readonly client: MongoClient,
    dbName = 'parley',
    private readonly release: () => Promise<void> = () => client.close(),
    private readonly budgetMs = RATE_COUNTER_BUDGET_MS,
  ) {
    this.db = client.db(dbName);
  }

  async hit(key: string, windowMs: number, nowMs: number): Promise<WindowCount> {
    const { id, endMs } = windowOf(key, windowMs, nowMs);
    const doc = await this.upsert(WINDOWS, id, { $inc: { count: 1 }, $setOnInsert: { expiresAt: new Date(endMs) } });
    return { count: doc.count as number, resetAtMs: endMs };
  }

  async take(key: string, bucket: TokenBucket, nowMs: number): Promise<number> {
    return (await this.upsert(BUCKETS, key, takeUpdate(bucket, nowMs))).waitMs as number;
  }

  async close(): Promise<void> {
    await this.release();
  }

  /**
   * The key's document after `update`, created if missing. Two first callers may both try to
   * insert: the server retries such an upsert on `_id`, and so does this once more.
   */
  private async upsert(collection: string, id: string, update: Document | Document[]): Promise<Document> {
    const run = () =>
      this.db.command(
        { findAndModify: collection, query: { _id: id }, update, upsert: true, new: true, maxTimeMS: this.budgetMs },
        { signal: AbortSignal.timeout(this.budgetMs) },
      );
    const answer = await run().catch((error: unknown) => {
      if (isDuplicateKey(error)) return run();
      throw error;
    });
    return answer.value as Document;
  }
}
