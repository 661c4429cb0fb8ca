import { ClientSession, Collection, MongoServerError } from 'mongodb';
import { LeaseFence, LeaseLostError, StoredLease } from '../../../shared/ports/read-model-store.port';
import { namesByOwner, takeOrRenewLease } from '../../shared/leases';

export interface LeaseRow {
  _id: string;
  owner: string;
  /** Milliseconds since the epoch on the clock of the process that took or renewed it. */
  expiresAt: number;
  /** Bumped by every fenced batch, so that the batch's transaction writes the lease (see `fence`). */
  fencedBatches?: number;
}

const DUPLICATE_KEY = 11000;

/** The `leases` collection of the read-model database: which worker runs each projection, and until when. */
export class MongoLeases {
  constructor(
    readonly rows: Collection<LeaseRow>,
    private readonly clock: () => number,
  ) {}

  /**
   * Writes every fence's lease in the batch's transaction, or throws LeaseLostError naming one
   * not held by its owner at `now`. A write rather than a read: a takeover of a lease (acquire,
   * outside any transaction) then conflicts with this transaction instead of slipping past a
   * snapshot read. Whichever commits first wins; a retried callback sees the new owner.
   */
  async fence(fences: readonly LeaseFence[], now: number, session: ClientSession): Promise<void> {
    for (const [owner, names] of namesByOwner(fences)) {
      const fenced = await this.rows.updateMany({ _id: { $in: names }, owner, expiresAt: { $gte: now } }, { $inc: { fencedBatches: 1 } }, { session });
      if (fenced.matchedCount !== names.length) {
        const held = await this.rows.find({ _id: { $in: names }, owner, expiresAt: { $gte: now } }, { session, projection: { _id: 1 } }).toArray();
        const lost = names.find((name) => !held.some((row) => row._id === name)) ?? names[0];
        throw new LeaseLostError(lost, owner);
      }
    }
  }

  acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return takeOrRenewLease(ttlMs, this.clock, async (now) => {
      try {
        // Matches only a lease we hold or one that ran out; when none matches, the upsert tries
        // to insert a second row with the same _id and fails: someone else holds it.
        const row = await this.rows.findOneAndUpdate(
          { _id: name, $or: [{ owner }, { expiresAt: { $lt: now } }] },
          { $set: { owner, expiresAt: now + ttlMs } },
          { upsert: true, returnDocument: 'after' },
        );
        return row?.owner === owner;
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
        throw error;
      }
    });
  }

  async release(name: string, owner: string): Promise<void> {
    await this.rows.deleteOne({ _id: name, owner });
  }

  async list(names: readonly string[]): Promise<Map<string, StoredLease>> {
    const rows = await this.rows.find({ _id: { $in: [...names] } }).toArray();
    return new Map(rows.map((r) => [r._id, { owner: r.owner, expiresAtMs: r.expiresAt }]));
  }
}
