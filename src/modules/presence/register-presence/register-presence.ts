import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { SubscriptionHandler } from '../../streaming/subscription-routes';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { PRESENCE_ROUTE } from '../presence-route';
import { PresenceTracker } from '../presence-tracker';

/**
 * `SUBSCRIBE …/users/:userId/register`: the user is online while this stays open. It sends
 * no events (chatkit-client completes it on OPEN); closing it, from either side, releases
 * the registration. Only the user themselves (or an su token) may register (its route's rule).
 */
@Injectable()
export class RegisterPresenceSubscription {
  static readonly pattern = `${PRESENCE_ROUTE}/users/:userId/register`;

  constructor(
    private readonly tracker: PresenceTracker,
    private readonly pipeline: CommandPipeline,
  ) {}

  readonly open: SubscriptionHandler = async ({ params }, channel) => {
    const { instanceId, userId } = params;
    const { state } = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!state.exists) throw userNotFound(userId);
    channel.onClose(this.tracker.register(instanceId, userId));
  };
}
