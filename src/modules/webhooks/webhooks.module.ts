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
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../messages/presentation/attachments.port';
import { MessagesModule } from '../messages/messages.module';
import { SentMessages } from '../messages/sent-messages';
import { PresenceModule } from '../presence/presence.module';
import { PresenceTracker } from '../presence/presence-tracker';
import { ChatkitWebhookLookups, offlineNowFrom } from './deliver-webhooks/chatkit-webhook-lookups';
import { WEBHOOK_CONTEXT_AT, WebhookContextAt } from './deliver-webhooks/webhook-context';

/**
 * Chatkit webhooks (`parley_webhooks`): management by su tokens; delivery from the log by the
 * worker (deliver-webhooks/), which runs outside Nest in the projector workers too.
 */
@Module({
  imports: [InstancesModule, MessagesModule, PresenceModule],
  controllers: [CreateWebhookController, ListWebhooksController, GetWebhookController, UpdateWebhookController, DeleteWebhookController, ReplayWebhookController, ListDeliveriesController, RedeliverDeliveryController, WebhookFeedController],
  providers: [
    Webhooks,
    {
      // The lookups of the API process: its presence tracker, its attachment links.
      provide: WEBHOOK_CONTEXT_AT,
      inject: [EVENT_STORE, SentMessages, PresenceTracker, ATTACHMENT_RESOLVER],
      useFactory: (events: EventStore, sentMessages: SentMessages, presence: PresenceTracker, attachments: AttachmentResolver): WebhookContextAt => {
        const lookups = new ChatkitWebhookLookups({ events, sentMessages, offlineNow: offlineNowFrom(presence), attachment: (instanceId, roomId, a) => ({ ...attachments.render(instanceId, roomId, a) }) });
        return (event) => lookups.at(event.position);
      },
    },
  ],
  exports: [Webhooks, WEBHOOK_CONTEXT_AT],
})
export class WebhooksModule {}
