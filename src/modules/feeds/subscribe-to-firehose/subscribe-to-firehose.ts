import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import { EPHEMERAL_BUS, EphemeralBus } from '../../../shared/ports/ephemeral-bus.port';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { Access } from '../../roles/access-rules';
import { FeedItemsPublished } from '../domain/feed.events';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { firehoseKey, firehoseSignals, FirehoseSignal, routePublishesToFirehose } from '../feeds-firehose';
import { FEEDS_SUBSCRIPTION_BASE, FIREHOSE_PATH } from '../feeds-route';

/**
 * `SUBSCRIBE /firehose/items` (feeds-client `firehose`, not resumed): every publish to any feed
 * of the instance as `{type: 0, data: {feed_id, items}}`, and feed subscriptions opening
 * (`{type: 1, data: {feed_id}}`) and closing (`{type: 2, …}`). Needs READ on `firehose/items`.
 */
@Injectable()
export class FirehoseSubscription implements OnModuleInit {
  private counter = 0;

  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly access: FeedAccess,
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter(routePublishesToFirehose);
    this.routes.register(
      `${FEEDS_SUBSCRIPTION_BASE}/firehose/items`,
      Access.ownCredential('a Feeds token granting READ on firehose/items (FeedAccess)'),
      (context, channel) => this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId } = context.params;
    await this.access.require(instanceId, context.headers.authorization, FIREHOSE_PATH, 'READ');
    // Event ids only need to be strings here (the firehose does not resume).
    const nextId = () => String(++this.counter);
    const off = this.bus.subscribe(firehoseSignals(instanceId), (message) => {
      const { type, feed_id } = message as FirehoseSignal;
      channel.push({ id: nextId(), body: { type, data: { feed_id } } });
    });
    channel.onClose(off);
    await openCatchUpThenLive({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'feeds',
      keys: [firehoseKey(instanceId)],
      projections: [],
      readInitial: async () => undefined,
      deliver: (event) => {
        const feedId = parseStreamName(event.streamName)!.id;
        const { items } = (event as RecordedEvent<FeedItemsPublished>).data;
        channel.push({ id: nextId(), body: { type: 0, data: { feed_id: feedId, items } } });
      },
    });
  }
}
