/** Every Feeds HTTP route (wire study §2.5, §2.6): one API version, v1. */
export const FEEDS_ROUTE = 'services/feeds/v1/:instanceId';
/** The same base for subscription routes (HTTP SUBSCRIBE and /ws). */
export const FEEDS_SUBSCRIPTION_BASE = '/services/feeds/v1/:instanceId';

/** The permission paths of §5.3: a feed's items, the list of feeds, the firehose. */
export const feedItemsPath = (feedId: string) => `feeds/${feedId}/items`;
export const FEEDS_LIST_PATH = 'feeds';
export const FIREHOSE_PATH = 'firehose/items';
