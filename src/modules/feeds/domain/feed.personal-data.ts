import { dataKeyIds, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { FEED_STREAM_CATEGORY } from './feed.decider';
import { FeedItemsDeleted, FeedItemsPublished } from './feed.events';

const feedOf = (stream: string) => {
  const parsed = parseStreamName(stream);
  return parsed && parsed.category === FEED_STREAM_CATEGORY ? parsed : null;
};

/**
 * A publish's items (their data, ids and times) under a key of the publish, named by its
 * first item id, when the operator asks for it (FEEDS_SEAL_ITEMS); `last_id` stays readable,
 * so the feed's ids go on above erased items.
 */
export const feedItemsPublishedPersonalData: PersonalDataRule<FeedItemsPublished> = {
  type: 'FeedItemsPublished',
  fields: ['items'],
  erased: { items: [] },
  optIn: 'feed_items',
  keyOf(event, stream) {
    const parsed = feedOf(stream);
    const first = event.data.items[0];
    return parsed && first ? { id: dataKeyIds.feedItems(parsed.instanceId, parsed.id, first.id), owner: null } : null;
  },
};

/**
 * The feed's items delete destroys the keys of every publish before it. A publish decided on
 * the items before the delete and appended after it fails its expected revision and is decided
 * again above the deleted ids, under a key named by its new first id; the `createdUpTo` bound
 * spares what is published to the feed after the delete.
 */
export const feedItemsDeletedShreds: ShredRule<FeedItemsDeleted> = {
  type: 'FeedItemsDeleted',
  destroys(_event, stream) {
    const parsed = feedOf(stream);
    return parsed ? [{ prefix: dataKeyIds.feed(parsed.instanceId, parsed.id) }] : [];
  },
};
