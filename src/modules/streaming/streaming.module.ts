import { Global, Inject, Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';
import { InstancesModule } from '../instances/instances.module';
import { SubscriptionRoutes } from './subscription-routes';
import { SubscriptionCaps } from './subscription-caps';
import { CONFIG, ParleyConfig } from '../../config/config';

/**
 * Live subscriptions: the route table both transports serve, and the process's one log
 * subscription that feeds them. Contexts register their subscription routes on start.
 */
@Global()
@Module({
  imports: [InstancesModule],
  providers: [
    SubscriptionRoutes,
    { provide: SubscriptionCaps, useFactory: (config: ParleyConfig) => new SubscriptionCaps(config.subscriptionCaps), inject: [CONFIG] },
    {
      provide: LiveLog,
      useFactory: (events: EventStore) => {
        const logger = new Logger('live-log');
        // It follows the log as stored and opens only what a listener takes (LiveLogOptions.open).
        const sealing = events instanceof SealingEventStore ? events : null;
        return new LiveLog(sealing?.stored ?? events, {
          open: sealing ? (event) => sealing.openEvent(event) : undefined,
          onError: (e, { dropped }) =>
            logger.error(dropped ? 'live log dropped; resubscribing' : 'live delivery failed', (e as Error)?.stack),
        });
      },
      inject: [EVENT_STORE],
    },
  ],
  exports: [SubscriptionRoutes, LiveLog],
})
export class StreamingModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(LiveLog) private readonly liveLog: LiveLog) {}

  async onModuleInit(): Promise<void> {
    await this.liveLog.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.liveLog.stop();
  }
}
