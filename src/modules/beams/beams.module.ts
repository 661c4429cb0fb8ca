import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { BeamsRoutes } from './beams-routes';
import { DeleteBeamsUser } from './delete-user/delete-beams-user';
import { InterestPublishRate } from './publish/interest-publish-rate';
import { INTEREST_PUBLISH_RATE, Publish } from './publish/publish';
import { SecretKeyCheck } from './secret-key-check';

/** Beams push notifications: the publish API and the user API (devices and delivery come later). */
@Module({
  imports: [InstancesModule],
  providers: [
    BeamsRoutes,
    SecretKeyCheck,
    Publish,
    DeleteBeamsUser,
    { provide: INTEREST_PUBLISH_RATE, useFactory: () => new InterestPublishRate() },
  ],
})
export class BeamsModule {}
