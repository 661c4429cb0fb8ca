import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { DeleteItemsController, DeleteItemsHandler } from './delete-items/delete-items';
import { FeedAccess } from './feeds-tokens/feed-access';
import { FeedsReadModel } from './feeds.read-model';
import { ListFeedsController, ListFeedsHandler } from './list-feeds/list-feeds';
import { ListItemsController, ListItemsHandler } from './list-items/list-items';
import { PublishItemsController, PublishItemsHandler } from './publish-items/publish-items';
import { FeedSubscription } from './subscribe-to-feed/subscribe-to-feed';
import { FirehoseSubscription } from './subscribe-to-firehose/subscribe-to-firehose';

/** Pusher Feeds v1 (`/services/feeds/v1/<instance>`): publish, paginate, delete, list, subscribe, firehose. */
@Module({
  imports: [InstancesModule],
  controllers: [PublishItemsController, ListItemsController, DeleteItemsController, ListFeedsController],
  providers: [
    FeedAccess,
    FeedsReadModel,
    PublishItemsHandler,
    ListItemsHandler,
    DeleteItemsHandler,
    ListFeedsHandler,
    FeedSubscription,
    FirehoseSubscription,
  ],
  exports: [FeedsReadModel],
})
export class FeedsModule {}
