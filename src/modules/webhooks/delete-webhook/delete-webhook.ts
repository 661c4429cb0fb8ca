import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Webhooks } from '../webhooks';
import { PARLEY_WEBHOOKS_ROUTE } from '../webhooks-route';

/** `DELETE /webhooks/:id`: 204; the worker stops its deliveries at its next look (within about a second). */
@Controller(PARLEY_WEBHOOKS_ROUTE)
export class DeleteWebhookController {
  constructor(private readonly webhooks: Webhooks) {}

  @Delete('webhooks/:webhookId')
  @Requires(Access.su)
  @HttpCode(204)
  async delete(@Param('instanceId') instanceId: string, @Param('webhookId') webhookId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.webhooks.delete(instanceId, webhookId, auditActor(actor));
  }
}
