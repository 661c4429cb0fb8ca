import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { BeamsRoutes } from './beams-routes';
import { IssueBeamsTokenController } from './beams-token-provider/issue-beams-token';
import { DeleteBeamsUser } from './delete-user/delete-beams-user';
import { BEAMS_USER_DELETION } from './beams-user-deletion.port';
import { ApnsProvider } from './delivery/apns-provider';
import { BeamsDelivery } from './delivery/beams-delivery';
import { FcmProvider } from './delivery/fcm-provider';
import { PUSH_PROVIDERS } from './delivery/push-provider';
import { WebPushProvider } from './delivery/web-push-provider';
import { Devices } from './devices/devices';
import { InterestPublishRate } from './publish/interest-publish-rate';
import { INTEREST_PUBLISH_RATE, Publish } from './publish/publish';
import { SecretKeyCheck } from './secret-key-check';
import { RATE_COUNTERS, RateCounters } from '../../shared/ports/rate-counter.port';
import { PublishWebhooks } from './webhooks/publish-webhooks';

/** Beams push notifications: the publish API, the user API, the device API (Web Push, APNs, FCM), delivery, and Chatkit's Beams token provider. */
@Module({
  imports: [InstancesModule],
  controllers: [IssueBeamsTokenController],
  providers: [
    BeamsRoutes,
    SecretKeyCheck,
    Publish,
    DeleteBeamsUser,
    { provide: BEAMS_USER_DELETION, useExisting: DeleteBeamsUser },
    Devices,
    WebPushProvider,
    ApnsProvider,
    FcmProvider,
    { provide: PUSH_PROVIDERS, useFactory: (...providers: unknown[]) => providers, inject: [WebPushProvider, ApnsProvider, FcmProvider] },
    BeamsDelivery,
    PublishWebhooks,
    { provide: INTEREST_PUBLISH_RATE, useFactory: (counters: RateCounters) => new InterestPublishRate(counters), inject: [RATE_COUNTERS] },
  ],
  exports: [BEAMS_USER_DELETION],
})
export class BeamsModule {}
