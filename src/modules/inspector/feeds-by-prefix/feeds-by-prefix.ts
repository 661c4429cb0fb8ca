import { Controller, Get, Param, Query } from '@nestjs/common';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { FeedsReadModel } from '../../feeds/feeds.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export const FEEDS_PAGE_DEFAULT = 50;
export const FEEDS_PAGE_MAX = 100;
/** Feed ids: letters, digits and "-" (the Feeds API's rule), at most 200 characters here. */
const FEED_ID_PART = /^[a-zA-Z0-9-]{0,200}$/;

const feedIdPart = (raw: unknown, name: string): string => {
  if (raw === undefined) return '';
  if (typeof raw !== 'string' || !FEED_ID_PART.test(raw)) throw unprocessable(`invalid_${name}`, `${name} must be (the start of) a feed id: letters, digits and "-", given once`);
  return raw;
};

/**
 * `GET feeds?prefix=&after=&limit=`: the instance's feeds that hold items, whose id starts with
 * `prefix`, with their item counts, in id order a page at a time (the Feeds API's `list`
 * answers one page with no way past it). `next` is the last feed id of a full page.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class FeedsByPrefixController {
  constructor(private readonly feeds: FeedsReadModel) {}

  @Get('feeds')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>): Promise<{ feeds: { id: string; item_count: number }[]; next?: string }> {
    const prefix = feedIdPart(query.prefix, 'prefix');
    const after = feedIdPart(query.after, 'after') || undefined;
    const limit = parseLimit(query.limit, { fallback: FEEDS_PAGE_DEFAULT, max: FEEDS_PAGE_MAX });
    const docs = await this.feeds.list(instanceId, prefix, limit + 1, after);
    const page = docs.slice(0, limit);
    return { feeds: page.map((d) => ({ id: d.feed_id, item_count: d.item_count })), ...(docs.length > limit && { next: page[page.length - 1].feed_id }) };
  }
}
