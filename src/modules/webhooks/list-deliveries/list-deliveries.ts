import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { WEBHOOK_DELIVERIES, WebhookDeliveryDocument } from '../deliver-webhooks/webhook-deliveries';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/** The most deliveries a page holds (the log keeps `DELIVERY_LOG_ENTRIES` per webhook). */
export const DELIVERIES_PAGE_MAX = 500;

/**
 * `GET /webhooks/:id/deliveries?before=&limit=`: the webhook's delivery log, newest first: each
 * event delivered (or given up on) with its id, type, log position, status, attempts, the last
 * response code and when. Never a payload. `before`: the id of the last delivery of the previous
 * page (older ones follow; a full page has a next one). Through the (instance_id, webhook_id,
 * delivered_at, _id) index: the deliveries of the same moment, older ids first, then older moments.
 */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class ListDeliveriesController {
  constructor(
    private readonly webhooks: Webhooks,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('webhooks/:webhookId/deliveries')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string, @Query() query: Record<string, unknown>) {
    await this.webhooks.get(instanceId, webhookId);
    const limit = parseLimit(query.limit, { fallback: 50, max: DELIVERIES_PAGE_MAX });
    const docs = await this.page({ instance_id: instanceId, webhook_id: webhookId }, await this.cursor(instanceId, webhookId, query.before), limit);
    return docs.map(({ _id, event_id, event_type, position, redelivery, status, attempts, response_code, error, delivered_at }) => ({
      id: _id,
      event_id,
      event_type,
      position,
      ...(redelivery !== undefined && { redelivery }),
      status,
      attempts,
      response_code,
      ...(error !== undefined && { error }),
      delivered_at,
    }));
  }

  /** The delivery `before` names (of this webhook), or none without it; 422 for one the log does not hold. */
  private async cursor(instanceId: string, webhookId: string, before: unknown): Promise<WebhookDeliveryDocument | undefined> {
    if (before === undefined || before === '') return undefined;
    const invalid = () => unprocessable('invalid_before', 'before must be the id of a delivery of this webhook that the log still holds (the last of the previous page)');
    if (typeof before !== 'string' || before.length > 1024) throw invalid();
    const doc = await this.readModels.get<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, before);
    if (!doc || doc.instance_id !== instanceId || doc.webhook_id !== webhookId) throw invalid();
    return doc;
  }

  /** Newest first: the deliveries of the cursor's moment with lower ids, then those of earlier moments. */
  private async page(where: { instance_id: string; webhook_id: string }, before: WebhookDeliveryDocument | undefined, limit: number): Promise<WebhookDeliveryDocument[]> {
    const newestFirst = [{ field: 'delivered_at', descending: true }, { field: '_id', descending: true }];
    if (!before) return this.readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, { where, sort: newestFirst, limit });
    const sameMoment = await this.readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, {
      where: { ...where, delivered_at: before.delivered_at, _id: { lt: before._id } },
      // By id alone: SQLite sorts (a temporary B-tree) when the sort names the field the query fixes.
      sort: [{ field: '_id', descending: true }],
      limit,
    });
    if (sameMoment.length === limit) return sameMoment;
    const earlier = await this.readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, {
      where: { ...where, delivered_at: { lt: before.delivered_at } },
      sort: newestFirst,
      limit: limit - sameMoment.length,
    });
    return [...sameMoment, ...earlier];
  }
}
