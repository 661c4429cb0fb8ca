import { Controller, Get, Param, Query } from '@nestjs/common';
import { parseLimit } from '../../../shared/http/query-params';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/**
 * `GET /webhooks/:id/events?after=<position>&limit=`: the events the webhook carries, pulled
 * rather than pushed, in log order after `after` (exclusive; left out: the start of the log),
 * with the same ids, types and payloads as its deliveries. `next` is where the next page starts
 * (it moves past events the webhook does not carry, so an empty page can still advance).
 */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class WebhookFeedController {
  constructor(private readonly webhooks: Webhooks) {}

  @Get('webhooks/:webhookId/events')
  @Requires(Access.su)
  feed(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string, @Query() query: Record<string, unknown>) {
    const after = query.after === undefined || query.after === '' ? null : String(query.after);
    return this.webhooks.feed(instanceId, webhookId, after, parseLimit(query.limit, { fallback: 100, max: 1_000 }));
  }
}
