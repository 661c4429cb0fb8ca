import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { CreateWebhookController } from './create-webhook/create-webhook';
import { DeleteWebhookController } from './delete-webhook/delete-webhook';
import { GetWebhookController } from './get-webhook/get-webhook';
import { ListWebhooksController } from './list-webhooks/list-webhooks';
import { ReplayWebhookController } from './replay-webhook/replay-webhook';
import { UpdateWebhookController } from './update-webhook/update-webhook';
import { RedeliverDeliveryController } from './redeliver-delivery/redeliver-delivery';
import { ListDeliveriesController } from './list-deliveries/list-deliveries';
import { WebhookFeedController } from './webhook-feed/webhook-feed';
import { Webhooks } from './webhooks';

/**
 * Chatkit webhooks (`parley_webhooks`): management by su tokens; delivery from the log by the
 * worker (deliver-webhooks/), which runs outside Nest in the projector workers too.
 */
@Module({
  imports: [InstancesModule],
  controllers: [CreateWebhookController, ListWebhooksController, GetWebhookController, UpdateWebhookController, DeleteWebhookController, ReplayWebhookController, ListDeliveriesController, RedeliverDeliveryController, WebhookFeedController],
  providers: [Webhooks],
  exports: [Webhooks],
})
export class WebhooksModule {}
