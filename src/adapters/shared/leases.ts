import type { LeaseFence } from '../../shared/ports/read-model-store.port';

/**
 * Takes or renews a lease through `write(now)`, which stores `now + ttl` as its expiry and says
 * whether `owner` holds it. A write may return only after the expiry it stored: it waited behind
 * a long transaction on the lease (MongoDB blocks a write on a document a transaction wrote until
 * it commits; SQLite waits for its write lock). The lease would then be expired as soon as it was
 * renewed, and the holder's next fenced batch refused; it is written once more from the current
 * time, which no longer waits for that transaction.
 */
export async function takeOrRenewLease(ttlMs: number, clock: () => number, write: (now: number) => Promise<boolean>): Promise<boolean> {
  const now = clock();
  if (!(await write(now))) return false;
  if (clock() < now + ttlMs) return true;
  return write(clock());
}

/** A batch's fences as lease names by owner, each group checked in one statement (a runner fences all its leases under one owner). */
export function namesByOwner(fences: readonly LeaseFence[]): Map<string, string[]> {
  const byOwner = new Map<string, string[]>();
  for (const { name, owner } of fences) {
    const names = byOwner.get(owner);
    if (names) names.push(name);
    else byOwner.set(owner, [name]);
  }
  return byOwner;
}
