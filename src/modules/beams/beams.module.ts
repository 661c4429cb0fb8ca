import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { BeamsRoutes } from './beams-routes';
import { IssueBeamsTokenController } from './beams-token-provider/issue-beams-token';
import { DeleteBeamsUser } from './delete-user/delete-beams-user';
import { WebPushDelivery } from './delivery/web-push-delivery';
import { Devices } from './devices/devices';
import { InterestPublishRate } from './publish/interest-publish-rate';
import { INTEREST_PUBLISH_RATE, Publish } from './publish/publish';
import { SecretKeyCheck } from './secret-key-check';
import { PublishWebhooks } from './webhooks/publish-webhooks';

/** Beams push notifications: the publish API, the user API, the Web Push device API, delivery, and Chatkit's Beams token provider. */
@Module({
  imports: [InstancesModule],
  controllers: [IssueBeamsTokenController],
  providers: [
    BeamsRoutes,
    SecretKeyCheck,
    Publish,
    DeleteBeamsUser,
    Devices,
    WebPushDelivery,
    PublishWebhooks,
    { provide: INTEREST_PUBLISH_RATE, useFactory: () => new InterestPublishRate() },
  ],
})
export class BeamsModule {}
