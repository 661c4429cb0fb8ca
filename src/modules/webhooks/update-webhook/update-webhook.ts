import { Body, Controller, Param, Put } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { WebhookUpdateDto } from '../presentation/webhook-fields.dto';
import { presentWebhook } from '../presentation/webhook.presenter';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/**
 * `PUT /webhooks/:id`: the fields given replace the webhook's (the secret too); `active: true`
 * reactivates a deactivated webhook, whose deliveries resume with the event that failed.
 */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class UpdateWebhookController {
  constructor(private readonly webhooks: Webhooks) {}

  @Put('webhooks/:webhookId')
  @Requires(Access.su)
  async update(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string, @Body() body: WebhookUpdateDto, @CurrentActor() actor: RequestActor) {
    return presentWebhook(webhookId, await this.webhooks.update(instanceId, webhookId, body, auditActor(actor)));
  }
}
