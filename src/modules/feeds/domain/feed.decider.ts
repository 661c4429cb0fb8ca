import { Decider } from '../../../shared/domain/decider';
import { badRequest } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { FeedEvent } from './feed.events';

/** What feeds-client accepts as a feed id (wire study §7.12); bounded so a stream name stays short. */
export const FEED_ID_PATTERN = /^[a-zA-Z0-9-]{1,200}$/;
/** Feeds whose id starts with this are read only with a token whose permission covers them. */
export const PRIVATE_FEED_PREFIX = 'private-';
/** Items one publish request may carry. */
export const MAX_ITEMS_PER_PUBLISH = 1000;

/** Each feed is a stream of its own: `feed-<instance>.<feed id>`. */
export const FEED_STREAM_CATEGORY = 'feed';
export const feedStream = (instanceId: string, feedId: string) => streamName(FEED_STREAM_CATEGORY, instanceId, feedId);

export const isPrivateFeed = (feedId: string) => feedId.startsWith(PRIVATE_FEED_PREFIX);

export const requireFeedId = (feedId: string): string => {
  if (!FEED_ID_PATTERN.test(feedId)) {
    throw badRequest('invalid_feed_id', 'A feed id is 1 to 200 characters of letters, digits and "-"');
  }
  return feedId;
};

/** All a feed's decisions need: the last item id given out, and whether undeleted items exist. */
export interface FeedState {
  readonly lastId: number;
  readonly hasItems: boolean;
}

export type FeedCommand =
  | { type: 'PublishItems'; items: readonly unknown[]; now: Date }
  | { type: 'DeleteItems'; now: Date };

export const feedDecider: Decider<FeedState, FeedCommand, FeedEvent> = {
  initialState: () => ({ lastId: 0, hasItems: false }),
  // Each event says the last id and whether items remain, so the newest one gives the whole state.
  foldsFrom: () => true,
  evolve: (state, event) =>
    event.type === 'FeedItemsPublished'
      ? { lastId: Number(event.data.last_id ?? event.data.items[event.data.items.length - 1]?.id ?? state.lastId), hasItems: true }
      : { lastId: Number(event.data.up_to_id), hasItems: false },

  decide(command, state) {
    if (command.type === 'DeleteItems') {
      // Nothing to delete: nothing to record (a repeated delete is a no-op).
      if (!state.hasItems) return [];
      return [{ type: 'FeedItemsDeleted', data: { up_to_id: String(state.lastId), deleted_at: command.now.toISOString() } }];
    }
    if (command.items.length === 0) throw badRequest('no_items', 'items must hold at least one item');
    if (command.items.length > MAX_ITEMS_PER_PUBLISH) {
      throw badRequest('too_many_items', `A publish holds at most ${MAX_ITEMS_PER_PUBLISH} items`);
    }
    const created = Math.floor(command.now.getTime() / 1000);
    const items = command.items.map((data, i) => ({ id: String(state.lastId + 1 + i), created, data }));
    // `last_id` stays readable when the items are sealed and their key destroyed.
    return [{ type: 'FeedItemsPublished', data: { items, last_id: items[items.length - 1].id } }];
  },
};
