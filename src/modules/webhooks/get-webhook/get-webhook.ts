import { Controller, Get, Param } from '@nestjs/common';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { presentWebhook } from '../presentation/webhook.presenter';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/** `GET /webhooks/:id`: read from the webhook's stream (its deactivation included); never the secret. */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class GetWebhookController {
  constructor(private readonly webhooks: Webhooks) {}

  @Get('webhooks/:webhookId')
  @Requires(Access.su)
  async get(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string) {
    return presentWebhook(webhookId, await this.webhooks.get(instanceId, webhookId));
  }
}
