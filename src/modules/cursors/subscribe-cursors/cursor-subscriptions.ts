import { Inject, Injectable } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { LogPosition, positionAfter } from '../../../shared/domain/event';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { cursorsProjection } from '../../../../projections/cursors/cursors.projection';
import { checkpointName } from '../../../../projections/projection';
import { Access } from '../../roles/access-rules';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { CURSORS_ROUTE } from '../cursors-route';
import { CursorSnapshot, CursorsReadModel, snapshotShows } from '../cursors.read-model';
import { roomCursorsKey, routeCursorSets, userCursorsKey } from '../cursor-live-keys';
import { cursorOfEvent } from '../presentation/cursor.presenter';
import { RoomAccess } from '../../rooms/room-access';

/**
 * SUBSCRIBE `/cursors/0/users/:userId` and `/cursors/0/rooms/:roomId`: an `initial_state` with
 * every cursor of the user (or room), then a `new_cursor` for each later accepted set. Event
 * ids are log positions.
 */
@Injectable()
export class CursorSubscriptions {
  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly cursors: CursorsReadModel,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Call once per process. */
  register(): void {
    this.liveLog.addRouter(routeCursorSets);
    this.routes.register(
      `/${CURSORS_ROUTE}/cursors/0/users/:userId`,
      Access.permission('cursors:read:get', { self: 'userId' }),
      (context, channel) => this.ofUser(context, channel),
    );
    this.routes.register(
      `/${CURSORS_ROUTE}/cursors/0/rooms/:roomId`,
      Access.permission('cursors:read:get', { room: 'roomId' }),
      (context, channel) => this.ofRoom(context, channel),
    );
  }

  private async ofUser({ params }: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId, userId } = params;
    await this.stream(channel, instanceId, userCursorsKey(instanceId, userId), () => this.cursors.snapshotOfUser(instanceId, userId));
  }

  private async ofRoom({ params, actor }: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId, roomId } = params;
    await this.access.readable(instanceId, roomId, actor);
    await this.stream(channel, instanceId, roomCursorsKey(instanceId, roomId), () => this.cursors.snapshotOfRoom(instanceId, roomId));
  }

  /** `initial_state`, then each cursor set the snapshot does not show yet. */
  private stream(channel: EventChannel, instanceId: string, key: string, read: () => Promise<CursorSnapshot>): Promise<void> {
    return openCatchUpThenLive({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'chatkit_cursors',
      keys: [key],
      projections: [checkpointName(cursorsProjection)],
      readInitial: async () => {
        const snapshot = await read();
        channel.push({
          id: newest(snapshot) ?? '0',
          body: { event_name: 'initial_state', data: { cursors: snapshot.cursors }, timestamp: this.clock.now().toISOString() },
        });
        return snapshot;
      },
      deliver: (event, snapshot) => {
        const cursor = cursorOfEvent(event);
        if (!cursor || snapshotShows(snapshot, event)) return;
        channel.push({ id: event.position, body: { event_name: 'new_cursor', data: cursor, timestamp: cursor.updated_at } });
      },
    });
  }
}

/** The newest position a snapshot reflects, as the id of its `initial_state`. */
const newest = (snapshot: CursorSnapshot): LogPosition | null => {
  let max = snapshot.checkpoint;
  for (const p of snapshot.positions.values()) if (positionAfter(p, max)) max = p;
  return max;
};
