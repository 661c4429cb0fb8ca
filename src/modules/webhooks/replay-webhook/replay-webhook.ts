import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { WebhookReplayDto } from '../presentation/webhook-fields.dto';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/**
 * `POST /webhooks/:id/replay` `{from_position}` or `{from_time}`: 202; the webhook's deliveries
 * start again after that position (or with the first event recorded at or after that time), in
 * log order, with the same event ids as the first time, then go on live.
 */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class ReplayWebhookController {
  constructor(private readonly webhooks: Webhooks) {}

  @Post('webhooks/:webhookId/replay')
  @Requires(Access.su)
  @HttpCode(202)
  async replay(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string, @Body() body: WebhookReplayDto, @CurrentActor() actor: RequestActor) {
    const { state, from_position } = await this.webhooks.replay(instanceId, webhookId, body, auditActor(actor));
    return { id: webhookId, replay: state.replay, from_position };
  }
}
