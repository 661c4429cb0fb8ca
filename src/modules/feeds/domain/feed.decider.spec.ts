import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { feedDecider, FeedState } from './feed.decider';
import { FeedEvent } from './feed.events';

const now = new Date('2026-01-02T03:04:05.678Z');
const given = (...events: FeedEvent[]): FeedState => fold(feedDecider, events);
const published = (...ids: string[]): FeedEvent => ({
  type: 'FeedItemsPublished',
  data: { items: ids.map((id) => ({ id, created: 1, data: id })) },
});

describe('feed decider', () => {
  it('gives a new feed ids from 1, in array order, with created in Unix seconds', () => {
    expect(feedDecider.decide({ type: 'PublishItems', items: ['a', { b: 1 }, null], now }, given())).toEqual([
      {
        type: 'FeedItemsPublished',
        data: {
          items: [
            { id: '1', created: 1767323045, data: 'a' },
            { id: '2', created: 1767323045, data: { b: 1 } },
            { id: '3', created: 1767323045, data: null },
          ],
        },
      },
    ]);
  });

  it('continues above the last id, after a deletion too', () => {
    const state = given(published('1', '2'), { type: 'FeedItemsDeleted', data: { up_to_id: '2', deleted_at: '' } });
    expect(state).toEqual({ lastId: 2, hasItems: false });
    const [event] = feedDecider.decide({ type: 'PublishItems', items: ['x'], now }, state);
    expect((event.data as any).items[0].id).toBe('3');
  });

  it('records a deletion only when items exist', () => {
    expect(feedDecider.decide({ type: 'DeleteItems', now }, given())).toEqual([]);
    expect(feedDecider.decide({ type: 'DeleteItems', now }, given(published('1', '2', '3')))).toEqual([
      { type: 'FeedItemsDeleted', data: { up_to_id: '3', deleted_at: now.toISOString() } },
    ]);
  });

  it('refuses an empty publish and one above the item limit', () => {
    expect(() => feedDecider.decide({ type: 'PublishItems', items: [], now }, given())).toThrow(DomainError);
    expect(() => feedDecider.decide({ type: 'PublishItems', items: new Array(1001).fill(1), now }, given())).toThrow(/at most 1000/);
  });

  it('folds from the newest event alone', () => {
    expect(feedDecider.foldsFrom!(published('7'))).toBe(true);
    expect(given(published('7'))).toEqual({ lastId: 7, hasItems: true });
  });
});
