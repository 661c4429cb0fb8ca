import { Controller, Get, Headers, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { badRequest } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { FEEDS_LIST_PATH, FEEDS_ROUTE } from '../feeds-route';
import { FeedsReadModel } from '../feeds.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export const DEFAULT_FEEDS_LIMIT = 50;
export const MAX_FEEDS_LIMIT = 1000;

/** A listed feed. */
export interface FeedSummary {
  readonly id: string;
  readonly item_count: number;
}

export class ListFeedsQuery {
  constructor(
    readonly instanceId: string,
    readonly prefix: string,
    readonly limit: number,
  ) {}
}

@QueryHandler(ListFeedsQuery)
export class ListFeedsHandler implements IQueryHandler<ListFeedsQuery, FeedSummary[]> {
  constructor(private readonly feeds: FeedsReadModel) {}

  async execute({ instanceId, prefix, limit }: ListFeedsQuery): Promise<FeedSummary[]> {
    const docs = await this.feeds.list(instanceId, prefix, limit);
    return docs.map((d) => ({ id: d.feed_id, item_count: d.item_count }));
  }
}

/** `GET /feeds?prefix=&limit=` (feeds-client `list`): non-empty feeds in id order; a token with READ on `feeds`. */
@Controller(FEEDS_ROUTE)
export class ListFeedsController {
  constructor(
    private readonly queries: QueryBus,
    private readonly access: FeedAccess,
  ) {}

  @Get('feeds')
  @Requires(Access.ownCredential('a Feeds token granting READ on feeds (FeedAccess)'))
  async list(
    @Param('instanceId') instanceId: string,
    @Headers('authorization') authorization: string | undefined,
    @Query() query: Record<string, unknown>,
  ): Promise<FeedSummary[]> {
    await this.access.require(instanceId, authorization, FEEDS_LIST_PATH, 'READ');
    const prefix = query.prefix === undefined ? '' : query.prefix;
    if (typeof prefix !== 'string' || !/^[a-zA-Z0-9-]{0,200}$/.test(prefix)) {
      throw badRequest('invalid_prefix', 'prefix must be the start of a feed id: letters, digits and "-"');
    }
    const limit = parseLimit(query.limit, { fallback: DEFAULT_FEEDS_LIMIT, max: MAX_FEEDS_LIMIT });
    return this.queries.execute(new ListFeedsQuery(instanceId, prefix, limit));
  }
}
