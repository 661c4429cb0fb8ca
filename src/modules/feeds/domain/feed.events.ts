import { DomainEvent } from '../../../shared/domain/event';

/** An item as clients see it: `id` a string of a whole number that increases within its feed, `created` in Unix seconds. */
export interface FeedItem {
  readonly id: string;
  readonly created: number;
  readonly data: unknown;
}

/**
 * One publish (or publish-batch) request: its items in array order, ids consecutive, and the
 * last of them (absent in events written before). With FEEDS_SEAL_ITEMS the items are sealed
 * in the log under a key of the publish, destroyed by the feed's items delete: they then read
 * as `[]`, and `last_id` still says where the feed's ids stand.
 */
export type FeedItemsPublished = DomainEvent<'FeedItemsPublished', { items: FeedItem[]; last_id?: string }>;

/** Every item up to `up_to_id` is gone; later items continue above it, so a resumed subscriber never sees an id twice. */
export type FeedItemsDeleted = DomainEvent<'FeedItemsDeleted', { up_to_id: string; deleted_at: string }>;

export type FeedEvent = FeedItemsPublished | FeedItemsDeleted;
