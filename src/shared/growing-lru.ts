import { LRUCache } from 'lru-cache';

/** lru-cache's options but its bounds, which `growingLru` sets. */
export type GrowingLruOptions<K extends {}, V extends {}> = Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation' | 'maxEntrySize'>;

/**
 * An LRU cache of at most `entries` entries whose memory grows with what it holds. lru-cache
 * given `max` allocates its arrays for `max` entries when made (about 28 bytes an entry, filled:
 * 2.8 MB for a 100,000-entry cache that may stay empty all its life); bounded by a size of one
 * per entry instead, it grows them as it fills and evicts the same way.
 */
export function growingLru<K extends {}, V extends {}>(entries: number, options: GrowingLruOptions<K, V> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 } as LRUCache.Options<K, V, unknown>);
}
