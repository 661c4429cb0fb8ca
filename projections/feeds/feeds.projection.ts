import { documentId, documentIdParts, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { FEED_STREAM_CATEGORY } from '../../src/modules/feeds/domain/feed.decider';
import type { FeedEvent } from '../../src/modules/feeds/domain/feed.events';

export const FEED_ITEMS = 'feed_items';
export const FEEDS = 'feeds';

export interface FeedItemDocument extends Document {
  readonly instance_id: string;
  readonly feed_id: string;
  /** The id as a number, for ordering and paging (ids are decimal strings that increase). */
  readonly seq: number;
  readonly id: string;
  readonly created: number;
  readonly data: unknown;
}

/** A feed that was ever published to; listed while it holds items. */
export interface FeedDocument extends Document {
  readonly instance_id: string;
  readonly feed_id: string;
  readonly item_count: number;
}

export const feedItemDocumentId = (instanceId: string, feedId: string, itemId: string) => documentId(instanceId, feedId, itemId);
export const feedDocumentId = (instanceId: string, feedId: string) => documentId(instanceId, feedId);

/** Every feed's items, paged newest first by id, and the feeds themselves with their item counts. */
export const feedsProjection: ProjectionDefinition<FeedEvent, FeedItemDocument | FeedDocument> = {
  name: 'feeds',
  version: 1,
  collections: [
    { name: FEED_ITEMS, indexes: [{ fields: ['instance_id', 'feed_id', 'seq'] }] },
    { name: FEEDS, indexes: [{ fields: ['instance_id', 'item_count', 'feed_id'] }, { fields: ['instance_id', 'feed_id'] }] },
  ],
  handles: ['FeedItemsPublished', 'FeedItemsDeleted'],
  destroys: ['FeedItemsDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream || stream.category !== FEED_STREAM_CATEGORY) return [];
    const { instanceId, id: feedId } = stream;
    const feed: Target = { collection: FEEDS, id: feedDocumentId(instanceId, feedId) };
    if (event.type === 'FeedItemsDeleted') {
      // The log is folded in order: the items stored now are exactly those up to `up_to_id`.
      return [feed, { collection: FEED_ITEMS, where: { instance_id: instanceId, feed_id: feedId } }];
    }
    return [feed, ...event.data.items.map((item) => ({ collection: FEED_ITEMS, id: feedItemDocumentId(instanceId, feedId, item.id) }))];
  },

  evolve(doc, event, target) {
    const { instanceId, id: feedId } = parseStreamName(event.streamName)!;
    if (target.collection === FEEDS) {
      const count = typeof doc?.item_count === 'number' ? doc.item_count : 0;
      const item_count = event.type === 'FeedItemsDeleted' ? 0 : count + event.data.items.length;
      return { _id: '', instance_id: instanceId, feed_id: feedId, item_count } satisfies FeedDocument;
    }
    if (event.type === 'FeedItemsDeleted') return null;
    const itemId = documentIdParts(target.id)[2];
    const item = event.data.items.find((i) => i.id === itemId);
    if (!item) return doc;
    return { _id: '', instance_id: instanceId, feed_id: feedId, seq: Number(item.id), id: item.id, created: item.created, data: item.data } satisfies FeedItemDocument;
  },
};
