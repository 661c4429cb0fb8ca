import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/**
 * `POST /webhooks/:id/deliveries/:deliveryId/redeliver`: 202; the delivery's event is sent
 * again (same event id, same bytes) by the webhook's worker before its next event, once per
 * request; the delivery log gets an entry with `redelivery`. An inactive webhook sends it once
 * reactivated.
 */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class RedeliverDeliveryController {
  constructor(private readonly webhooks: Webhooks) {}

  @Post('webhooks/:webhookId/deliveries/:deliveryId/redeliver')
  @Requires(Access.su)
  @HttpCode(202)
  async redeliver(
    @Param('instanceId') instanceId: string,
    @Param('webhookId') webhookId: string,
    @Param('deliveryId') deliveryId: string,
    @CurrentActor() actor: RequestActor,
  ) {
    const { state, delivery } = await this.webhooks.redeliver(instanceId, webhookId, deliveryId, auditActor(actor));
    return { delivery_id: deliveryId, event_id: delivery.event_id, redelivery: state.redeliveries };
  }
}
