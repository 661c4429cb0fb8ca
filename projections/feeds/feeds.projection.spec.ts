import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { FEED_ITEMS, FEEDS, feedDocumentId, feedItemDocumentId, feedsProjection } from './feeds.projection';

const publish = (feed: string, ...ids: string[]) =>
  recorded(`feed-acme.${feed}`, 'FeedItemsPublished', { items: ids.map((id) => ({ id, created: 5, data: { n: id } })) });

describe('feeds projection', () => {
  it('stores each item of a publish and counts the feed’s items', async () => {
    const docs = await project(feedsProjection, [publish('private-news', '1', '2'), publish('private-news', '3')]);
    expect(docs.get(`${FEED_ITEMS}|${feedItemDocumentId('acme', 'private-news', '2')}`)).toMatchObject({
      instance_id: 'acme',
      feed_id: 'private-news',
      seq: 2,
      id: '2',
      created: 5,
      data: { n: '2' },
    });
    expect(docs.get(`${FEEDS}|${feedDocumentId('acme', 'private-news')}`)).toMatchObject({ feed_id: 'private-news', item_count: 3 });
  });

  it('a deletion removes the feed’s items, not another feed’s, and later items are stored again', async () => {
    const docs = await project(feedsProjection, [
      publish('a', '1', '2'),
      publish('b', '1'),
      recorded('feed-acme.a', 'FeedItemsDeleted', { up_to_id: '2', deleted_at: 't' }),
      publish('a', '3'),
    ]);
    const items = [...docs.keys()].filter((k) => k.startsWith(`${FEED_ITEMS}|`)).sort();
    expect(items).toEqual([`${FEED_ITEMS}|${feedItemDocumentId('acme', 'a', '3')}`, `${FEED_ITEMS}|${feedItemDocumentId('acme', 'b', '1')}`].sort());
    expect(docs.get(`${FEEDS}|${feedDocumentId('acme', 'a')}`)).toMatchObject({ item_count: 1 });
  });
});
