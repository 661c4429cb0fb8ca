import { Module, OnModuleInit } from '@nestjs/common';
import { Access } from '../roles/access-rules';
import { SubscriptionRoutes } from '../streaming/subscription-routes';
import { PresenceTracker } from './presence-tracker';
import { RegisterPresenceSubscription } from './register-presence/register-presence';
import { SubscribeToPresenceSubscription } from './subscribe-to-presence/subscribe-to-presence';

/**
 * Who is online (chatkit_presence v2): register subscriptions put a user online, user
 * presence subscriptions follow it. Ephemeral: nothing reaches the log or the read models.
 */
@Module({
  providers: [PresenceTracker, RegisterPresenceSubscription, SubscribeToPresenceSubscription],
  exports: [PresenceTracker],
})
export class PresenceModule implements OnModuleInit {
  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly register: RegisterPresenceSubscription,
    private readonly subscribe: SubscribeToPresenceSubscription,
  ) {}

  onModuleInit(): void {
    this.routes.register(
      RegisterPresenceSubscription.pattern,
      Access.permission('presence:subscribe', { self: 'userId' }),
      this.register.open,
    );
    this.routes.register(SubscribeToPresenceSubscription.pattern, Access.permission('presence:subscribe'), this.subscribe.open);
  }
}
