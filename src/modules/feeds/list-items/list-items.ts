import { Controller, Get, Headers, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { requireFeedId } from '../domain/feed.decider';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { FEEDS_ROUTE } from '../feeds-route';
import { FeedPage, FeedsReadModel } from '../feeds.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export class ListItemsQuery {
  constructor(
    readonly instanceId: string,
    readonly feedId: string,
    readonly cursor: number | undefined,
    readonly limit: number,
  ) {}
}

@QueryHandler(ListItemsQuery)
export class ListItemsHandler implements IQueryHandler<ListItemsQuery, FeedPage> {
  constructor(private readonly feeds: FeedsReadModel) {}

  execute({ instanceId, feedId, cursor, limit }: ListItemsQuery): Promise<FeedPage> {
    return this.feeds.page(instanceId, feedId, cursor, limit);
  }
}

/** A `cursor` is an item id: a whole number (absent or empty: start from the newest item). */
export const parseCursor = (raw: unknown): number | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw unprocessable('invalid_cursor', 'cursor must be an item id (a whole number)');
  }
  return n;
};

/**
 * `GET /feeds/<id>/items?cursor=&limit=` (paginate): items at or below `cursor`, newest first,
 * `limit` (default 50) at most, with `next_cursor` (the next page's first id, or null) and
 * `remaining` (items older than this page). Status 200 exactly: feeds-client needs it.
 */
@Controller(FEEDS_ROUTE)
export class ListItemsController {
  constructor(
    private readonly queries: QueryBus,
    private readonly access: FeedAccess,
  ) {}

  @Get('feeds/:feedId/items')
  @Requires(Access.ownCredential('a Feeds token for private- feeds, none for public ones (FeedAccess)'))
  async list(
    @Param('instanceId') instanceId: string,
    @Param('feedId') feedId: string,
    @Headers('authorization') authorization: string | undefined,
    @Query() query: Record<string, unknown>,
  ): Promise<FeedPage> {
    requireFeedId(feedId);
    await this.access.readFeed(instanceId, feedId, authorization);
    const cursor = parseCursor(query.cursor);
    const limit = parseLimit(query.limit, { fallback: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE });
    return this.queries.execute(new ListItemsQuery(instanceId, feedId, cursor, limit));
  }
}
