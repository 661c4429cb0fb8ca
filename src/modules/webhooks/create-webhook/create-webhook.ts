import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { WebhookCreateDto } from '../presentation/webhook-fields.dto';
import { presentWebhook } from '../presentation/webhook.presenter';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/** `POST /webhooks` `{url, secret, event_types?, custom_data?, standard_webhooks?}`: 201 with the webhook and its `id`. */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class CreateWebhookController {
  constructor(private readonly webhooks: Webhooks) {}

  @Post('webhooks')
  @Requires(Access.su)
  @HttpCode(201)
  async create(@Param('instanceId') instanceId: string, @Body() body: WebhookCreateDto, @CurrentActor() actor: RequestActor) {
    const { id, state } = await this.webhooks.create(instanceId, body, auditActor(actor));
    return presentWebhook(id, state);
  }
}
