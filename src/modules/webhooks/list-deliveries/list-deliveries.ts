import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { WEBHOOK_DELIVERIES, WebhookDeliveryDocument } from '../deliver-webhooks/webhook-deliveries';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/**
 * `GET /webhooks/:id/deliveries?limit=`: the webhook's delivery log, newest first: each event
 * delivered (or given up on) with its id, type, log position, status, attempts, the last
 * response code and when. Never a payload.
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
    const limit = parseLimit(query.limit, { fallback: 50, max: 500 });
    const docs = await this.readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, {
      where: { instance_id: instanceId, webhook_id: webhookId },
      sort: [{ field: 'delivered_at', descending: true }],
      limit,
    });
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
}
