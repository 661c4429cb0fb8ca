import type { LeaseFence } from '../../shared/ports/read-model-store.port';

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
