import { Inject, Injectable } from '@nestjs/common';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { SubscriptionHandler } from '../../streaming/subscription-routes';
import { PRESENCE_ROUTE } from '../presence-route';
import { PresenceState, PresenceTracker } from '../presence-tracker';

/**
 * `SUBSCRIBE …/users/:userId`: a `presence_state` event with the user's state once it is
 * truthful (at once, or a few seconds after a restart), then one on each change. Any token of
 * the instance may watch any user; a user that does not exist is simply offline (other
 * clients may still hold a deleted user in their stores).
 */
@Injectable()
export class SubscribeToPresenceSubscription {
  static readonly pattern = `${PRESENCE_ROUTE}/users/:userId`;

  constructor(
    private readonly tracker: PresenceTracker,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  readonly open: SubscriptionHandler = async ({ params }, channel) => {
    const { instanceId, userId } = params;
    let eventId = 0;
    const send = (state: PresenceState) =>
      channel.push({
        id: String(++eventId),
        body: { event_name: 'presence_state', data: { state }, timestamp: this.clock.now().toISOString() },
      });
    // The first state may come a moment later (see PresenceTracker.watch): the SDK waits for it.
    const watch = this.tracker.watch(instanceId, userId, send);
    channel.onClose(() => watch.stop());
  };
}
