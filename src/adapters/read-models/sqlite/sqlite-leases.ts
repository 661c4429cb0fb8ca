import type Database from 'better-sqlite3';
import { LeaseFence, LeaseLostError, StoredLease } from '../../../shared/ports/read-model-store.port';
import { namesByOwner, takeOrRenewLease } from '../../shared/leases';

/**
 * The `leases` table of the read-model file: which worker runs each projection, and until
 * when. Statements come from the store's cache (`prepared`), and each call runs on the store's
 * connection as the store hands it over: `ready` first ends what a failed transaction left open.
 */
export class SqliteLeases {
  constructor(
    private readonly prepared: (sql: string) => Database.Statement,
    private readonly clock: () => number,
    private readonly ready: () => void,
  ) {}

  /**
   * Throws LeaseLostError naming a fence whose lease is not held by its owner at `now`. Called
   * in the batch's IMMEDIATE transaction: acquire writes under the same lock, so no lease can
   * change hands between this check and the batch's commit.
   */
  checkFences(fences: readonly LeaseFence[], now: number): void {
    for (const [owner, names] of namesByOwner(fences)) {
      // The names as parameters (a statement per count, prepared once): every batch checks the same fences, and json_each costs more.
      const held = this.prepared(`SELECT name FROM leases WHERE owner = ? AND expires_at >= ? AND name IN (${Array(names.length).fill('?').join(', ')})`)
        .pluck()
        .all(owner, now, ...names) as string[];
      if (held.length === names.length) continue;
      const lost = names.find((name) => !held.includes(name));
      if (lost !== undefined) throw new LeaseLostError(lost, owner);
    }
  }

  acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return takeOrRenewLease(ttlMs, this.clock, async (now) => {
      this.ready();
      const info = this.prepared(
        `INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?)
         ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE leases.owner = excluded.owner OR leases.expires_at < ?`,
      ).run(name, owner, now + ttlMs, now);
      return info.changes > 0;
    });
  }

  release(name: string, owner: string): void {
    this.ready();
    this.prepared('DELETE FROM leases WHERE name = ? AND owner = ?').run(name, owner);
  }

  list(names: readonly string[]): Map<string, StoredLease> {
    if (!names.length) return new Map();
    this.ready();
    const sql = `SELECT name, owner, expires_at FROM leases WHERE name IN (${names.map(() => '?').join(', ')})`;
    const rows = this.prepared(sql).all(...names) as { name: string; owner: string; expires_at: number }[];
    return new Map(rows.map((r) => [r.name, { owner: r.owner, expiresAtMs: r.expires_at }]));
  }
}
