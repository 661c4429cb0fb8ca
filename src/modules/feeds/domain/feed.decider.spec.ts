import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { feedDecider } from './feed.decider';
import { FeedEvent } from './feed.events';

const now = new Date('2026-01-02T03:04:05.678Z');
const given = deciderSpecification(feedDecider);
const published = (...ids: string[]): FeedEvent => ({
  type: 'FeedItemsPublished',
  data: { items: ids.map((id) => ({ id, created: 1, data: id })) },
});
const deletedUpTo = (id: string): FeedEvent => ({ type: 'FeedItemsDeleted', data: { up_to_id: id, deleted_at: '' } });

describe('feed decider', () => {
  it('gives a new feed ids from 1, in array order, with created in Unix seconds', () => {
    given()
      .when({ type: 'PublishItems', items: ['a', { b: 1 }, null], now })
      .then([
        {
          type: 'FeedItemsPublished',
          data: {
            items: [
              { id: '1', created: 1767323045, data: 'a' },
              { id: '2', created: 1767323045, data: { b: 1 } },
              { id: '3', created: 1767323045, data: null },
            ],
            last_id: '3',
          },
        },
      ]);
  });

  it('continues above the last id, after a deletion too', () => {
    expect(fold(feedDecider, [published('1', '2'), deletedUpTo('2')])).toEqual({ lastId: 2, hasItems: false });
    given(published('1', '2'), deletedUpTo('2'))
      .when({ type: 'PublishItems', items: ['x'], now })
      .then([{ type: 'FeedItemsPublished', data: { items: [{ id: '3', created: 1767323045, data: 'x' }], last_id: '3' } }]);
  });

  it('records a deletion only when items exist', () => {
    given().when({ type: 'DeleteItems', now }).thenNothingHappened();
    given(published('1', '2', '3'))
      .when({ type: 'DeleteItems', now })
      .then([{ type: 'FeedItemsDeleted', data: { up_to_id: '3', deleted_at: now.toISOString() } }]);
  });

  it('refuses an empty publish and one above the item limit', () => {
    given().when({ type: 'PublishItems', items: [], now }).thenThrows(DomainError, { code: 'bad_request/no_items' });
    given().when({ type: 'PublishItems', items: new Array(1001).fill(1), now }).thenThrows(DomainError, /at most 1000/);
  });

  it('folds from the newest event alone', () => {
    expect(feedDecider.foldsFrom!(published('7'))).toBe(true);
    expect(fold(feedDecider, [published('7')])).toEqual({ lastId: 7, hasItems: true });
  });

  it('goes on above items whose key is destroyed (they read as no items): their last id stays readable', () => {
    const erased: FeedEvent = { type: 'FeedItemsPublished', data: { items: [], last_id: '9' } };
    expect(fold(feedDecider, [erased])).toEqual({ lastId: 9, hasItems: true });
    given(erased)
      .when({ type: 'PublishItems', items: ['x'], now })
      .then([{ type: 'FeedItemsPublished', data: { items: [{ id: '10', created: 1767323045, data: 'x' }], last_id: '10' } }]);
  });
});
