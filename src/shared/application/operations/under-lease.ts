import type { ReadModelStore } from '../../ports/read-model-store.port';

/**
 * Runs `work` while holding the named lease, renewed every third of its duration, and
 * releases it after: two processes sweeping the same work list do not do the same item at
 * once, and a crashed holder's item is taken over once its lease ran out. Resolves false,
 * without running `work`, when another process holds the lease.
 */
export async function underLease(
  readModels: ReadModelStore,
  lease: string,
  owner: string,
  leaseMs: number,
  work: () => Promise<void>,
): Promise<boolean> {
  if (!(await readModels.acquireLease(lease, owner, leaseMs))) return false;
  const renewal = setInterval(() => void readModels.acquireLease(lease, owner, leaseMs).catch(() => undefined), leaseMs / 3);
  try {
    await work();
  } finally {
    clearInterval(renewal);
    await readModels.releaseLease(lease, owner);
  }
  return true;
}
