import { Inject, Injectable } from '@nestjs/common';
import { Condition, READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { FEED_ITEMS, FeedDocument, FeedItemDocument, FEEDS, feedsProjection } from '../../../projections/feeds/feeds.projection';
import { checkpointName } from '../../../projections/projection';
import { FeedItem } from './domain/feed.events';

/** The projection every Feeds read depends on: a publish or delete answers once it shows the change. */
export const FEED_READS: readonly string[] = [checkpointName(feedsProjection)];

/** What lies before a page (or a subscription's replay): where the next page starts and how many items it holds in all. */
export interface OlderItems {
  /** Id of the newest item older than the page, to pass as `cursor`; null when none. */
  readonly next_cursor: string | null;
  /** How many items are older than the page. */
  readonly remaining: number;
}

export interface FeedPage extends OlderItems {
  readonly items: FeedItem[];
}

export const presentItem = (doc: FeedItemDocument): FeedItem => ({ id: doc.id, created: doc.created, data: doc.data });

/** Reads of the feeds projection: pages newest first, replays oldest first, feeds by prefix. */
@Injectable()
export class FeedsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** Items with ids at or below `cursor` (all when absent), newest first. */
  async page(instanceId: string, feedId: string, cursor: number | undefined, limit: number): Promise<FeedPage> {
    const docs = await this.newest(instanceId, feedId, limit + 1, cursor);
    const items = docs.slice(0, limit);
    const older = items.length ? await this.olderThan(instanceId, feedId, items[items.length - 1].seq) : { next_cursor: null, remaining: 0 };
    return { items: items.map(presentItem), ...older };
  }

  /** Up to `limit` items at or below `atMost` (all when absent), newest first. */
  newest(instanceId: string, feedId: string, limit: number, atMost?: number): Promise<FeedItemDocument[]> {
    return this.readModels.find<FeedItemDocument>(FEED_ITEMS, {
      where: { instance_id: instanceId, feed_id: feedId, ...(atMost !== undefined && { seq: { lte: atMost } }) },
      sort: [{ field: 'seq', descending: true }],
      limit,
    });
  }

  /** Items above `afterSeq`, oldest first. */
  after(instanceId: string, feedId: string, afterSeq: number, limit: number): Promise<FeedItemDocument[]> {
    return this.readModels.find<FeedItemDocument>(FEED_ITEMS, {
      where: { instance_id: instanceId, feed_id: feedId, seq: { gt: afterSeq } },
      sort: [{ field: 'seq' }],
      limit,
    });
  }

  /** The items below `seq`: the newest one's id and how many. */
  async olderThan(instanceId: string, feedId: string, seq: number): Promise<OlderItems> {
    const where = { instance_id: instanceId, feed_id: feedId, seq: { lt: seq } };
    const [newest] = await this.readModels.find<FeedItemDocument>(FEED_ITEMS, { where, sort: [{ field: 'seq', descending: true }], limit: 1 });
    if (!newest) return { next_cursor: null, remaining: 0 };
    return { next_cursor: newest.id, remaining: await this.readModels.count(FEED_ITEMS, where) };
  }

  /** Feeds that hold items, whose id starts with `prefix`, in id order (after the id `after`, when given). */
  list(instanceId: string, prefix: string, limit: number, after?: string): Promise<FeedDocument[]> {
    // Feed ids are [a-zA-Z0-9-]: every id with the prefix sorts below prefix + '~'.
    const where: Record<string, Condition> = { instance_id: instanceId, item_count: { gt: 0 } };
    if (prefix || after !== undefined) {
      const from = after !== undefined && after >= prefix ? { gt: after } : { gte: prefix };
      where.feed_id = { ...from, ...(prefix && { lt: `${prefix}~` }) };
    }
    return this.readModels.find<FeedDocument>(FEEDS, {
      where,
      sort: [{ field: 'feed_id' }],
      limit,
    });
  }
}
