import { LogPosition } from '../../domain/event';
import { ReadModelStore, StoredLease } from '../../ports/read-model-store.port';

/**
 * The read-model store as readers see it when projections are split in partitions
 * (PROJECTOR_PARTITIONS): a split projection's checkpoint is where its least advanced
 * partition stands (absent while any has none), and its lease is held only while every
 * partition's is (the one expiring first, owners listed). Every other name, a partition's
 * included, passes through: the projector runner reads and writes its partitions' own.
 */
export function withPartitionedCheckpoints(store: ReadModelStore, split: ReadonlyMap<string, readonly string[]>): ReadModelStore {
  if (split.size === 0) return store;
  const expand = (names: readonly string[]) => [...new Set(names.flatMap((name) => split.get(name) ?? [name]))];
  const getCheckpoints = async (names: readonly string[]): Promise<Map<string, LogPosition>> => {
    const stored = await store.getCheckpoints(expand(names));
    const answer = new Map<string, LogPosition>();
    for (const name of names) {
      const parts = split.get(name);
      if (!parts) {
        if (stored.has(name)) answer.set(name, stored.get(name)!);
        continue;
      }
      const positions = parts.map((part) => stored.get(part));
      if (positions.every((p): p is LogPosition => p !== undefined)) answer.set(name, positions.reduce((a, b) => (a < b ? a : b)));
    }
    return answer;
  };
  const leases = async (names: readonly string[]): Promise<Map<string, StoredLease>> => {
    const stored = await store.leases(expand(names));
    const answer = new Map<string, StoredLease>();
    for (const name of names) {
      const parts = split.get(name);
      if (!parts) {
        if (stored.has(name)) answer.set(name, stored.get(name)!);
        continue;
      }
      const held = parts.map((part) => stored.get(part));
      if (!held.every((lease): lease is StoredLease => lease !== undefined)) continue;
      answer.set(name, {
        owner: [...new Set(held.map((lease) => lease.owner))].join(','),
        expiresAtMs: Math.min(...held.map((lease) => lease.expiresAtMs)),
      });
    }
    return answer;
  };
  const overrides: Partial<ReadModelStore> = {
    getCheckpoints,
    getCheckpoint: async (name) => (await getCheckpoints([name])).get(name) ?? null,
    leases,
  };
  // Every other member is the store's own, called on the store itself.
  return new Proxy(store, {
    get(target, property) {
      if (property in overrides) return overrides[property as keyof ReadModelStore];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
