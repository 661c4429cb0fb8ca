import { withOptIns } from '../../../shared/domain/personal-data';
import { FeedItemsPublished } from './feed.events';
import { feedItemsDeletedShreds, feedItemsPublishedPersonalData } from './feed.personal-data';

const published = (...ids: string[]): FeedItemsPublished => ({
  type: 'FeedItemsPublished',
  data: { items: ids.map((id) => ({ id, created: 1, data: { n: id } })), last_id: ids[ids.length - 1] },
});

describe('feed personal data', () => {
  it("seals a publish's items under a key named by its first item, and the items delete destroys every key of the feed and no other feed's", async () => {
    expect(feedItemsPublishedPersonalData.fields).toEqual(['items']);
    expect(feedItemsPublishedPersonalData.erased).toEqual({ items: [] });
    const key = feedItemsPublishedPersonalData.keyOf(published('3', '4'), 'feed-acme.news')!.id;
    expect(key).toBe('acme/feed/news/3');
    const deleted = { type: 'FeedItemsDeleted' as const, data: { up_to_id: '4', deleted_at: 'd' } };
    const [selector] = await feedItemsDeletedShreds.destroys(deleted, 'feed-acme.news', { readStream: async () => [] });
    const prefix = (selector as { prefix: string }).prefix;
    expect(key.startsWith(prefix)).toBe(true);
    expect(feedItemsPublishedPersonalData.keyOf(published('3'), 'feed-acme.news-2')!.id.startsWith(prefix)).toBe(false);
  });

  it('seals only when the operator opts in (FEEDS_SEAL_ITEMS), yet always says what erased items read as', () => {
    const [off] = withOptIns([feedItemsPublishedPersonalData], new Set());
    expect(off.keyOf(published('1') as never, 'feed-acme.news')).toBeNull();
    expect(off.erased).toEqual({ items: [] });
    const [on] = withOptIns([feedItemsPublishedPersonalData], new Set(['feed_items']));
    expect(on).toBe(feedItemsPublishedPersonalData);
  });
});
