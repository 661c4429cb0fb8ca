import { Controller, Get, Param } from '@nestjs/common';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { presentWebhookDocument } from '../presentation/webhook.presenter';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/** `GET /webhooks`: the instance's webhooks, oldest first (at most MAX_WEBHOOKS_PER_INSTANCE). */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class ListWebhooksController {
  constructor(private readonly webhooks: Webhooks) {}

  @Get('webhooks')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string) {
    return (await this.webhooks.list(instanceId)).map(presentWebhookDocument);
  }
}
