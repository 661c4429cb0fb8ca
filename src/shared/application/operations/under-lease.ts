import type { ReadModelStore } from '../../ports/read-model-store.port';

/**
 * Runs `work` while holding the named lease, renewed every third of its duration, and
 * releases it after: two processes sweeping the same work list do not do the same item at
 * once, and a crashed holder's item is taken over once its lease ran out. Resolves false,
 * without running `work`, when another process holds the lease. `lost` aborts when a renewal
 * finds the lease taken by another (this process stalled past its expiry): long-running work
 * stops there, and writes it fences with the lease are refused anyway.
 */
export async function underLease(
  readModels: ReadModelStore,
  lease: string,
  owner: string,
  leaseMs: number,
  work: (lost: AbortSignal) => Promise<void>,
): Promise<boolean> {
  if (!(await readModels.acquireLease(lease, owner, leaseMs))) return false;
  const lost = new AbortController();
  const renewal = setInterval(
    () =>
      void readModels.acquireLease(lease, owner, leaseMs).then(
        (held) => held || lost.abort(new Error(`the lease ${lease} was taken over by another process`)),
        () => undefined, // a failed renewal is tried again a third of the lease later
      ),
    leaseMs / 3,
  );
  try {
    await work(lost.signal);
  } finally {
    clearInterval(renewal);
    await readModels.releaseLease(lease, owner);
  }
  return true;
}
