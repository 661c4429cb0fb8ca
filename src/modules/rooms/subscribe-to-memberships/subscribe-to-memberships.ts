import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { parseChatApiVersion } from '../../../shared/http/chatkit-route';
import { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { chatkitEvent, endForDeletedRoom } from '../../../shared/subscriptions/wire-event';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { membershipsProjection } from '../../../../projections/rooms/memberships.projection';
import { checkpointName } from '../../../../projections/projection';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { Access } from '../../roles/access-rules';
import { roomStream } from '../domain/room.decider';
import { RoomMembersAdded, RoomMembersRemoved } from '../domain/room.events';
import { RoomAccess } from '../room-access';
import { RoomsReadModel } from '../rooms.read-model';

/** Routing key under which every user deletion of an instance is delivered. */
export const deletedUsersKey = (instanceId: string) => `users-deleted:${instanceId}`;

/**
 * `SUBSCRIBE /rooms/:roomId/memberships` (v2 and v6): `initial_state {user_ids}`, then
 * `user_joined` / `user_left` as members come and go (a deleted user leaves every room).
 * The subscription keeps the member set it has shown, so an event the initial state already
 * reflected is never repeated.
 */
@Injectable()
export class MembershipsSubscription implements OnModuleInit {
  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly access: RoomAccess,
    private readonly rooms: RoomsReadModel,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) => {
      if (event.type !== 'UserDeleted') return [];
      const stream = parseStreamName(event.streamName);
      return stream ? [deletedUsersKey(stream.instanceId)] : [];
    });
    this.routes.register(
      '/services/chatkit/:version/:instanceId/rooms/:roomId/memberships',
      Access.permission('room:get', { room: 'roomId' }),
      (context, channel) => this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { version, instanceId, roomId } = context.params;
    parseChatApiVersion(version);
    await this.access.readable(instanceId, roomId, context.actor);

    await openCatchUpThenLive({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'chatkit',
      keys: [roomStream(instanceId, roomId), deletedUsersKey(instanceId)],
      projections: [checkpointName(membershipsProjection)],
      readInitial: async () => {
        const initial = await this.rooms.memberIds(instanceId, roomId);
        channel.push({
          id: this.liveLog.position ?? '0',
          body: chatkitEvent('initial_state', { user_ids: initial }, new Date().toISOString()),
        });
        return new Set(initial);
      },
      deliver: (event, members) => this.apply(event, members, roomId, channel),
    });
  }

  private apply(event: RecordedEvent, members: Set<string>, roomId: string, channel: EventChannel): void {
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    const say = (name: string, userId: string) => channel.push({ id: event.position, body: chatkitEvent(name, { user_id: userId }, timestamp) });
    switch (event.type) {
      case 'RoomMembersAdded':
        for (const { user_id } of (event as RecordedEvent<RoomMembersAdded>).data.members) {
          if (!members.has(user_id)) {
            members.add(user_id);
            say('user_joined', user_id);
          }
        }
        return;
      case 'RoomMembersRemoved':
        for (const userId of (event as RecordedEvent<RoomMembersRemoved>).data.user_ids) {
          if (members.delete(userId)) say('user_left', userId);
        }
        return;
      case 'UserDeleted': {
        const userId = parseStreamName(event.streamName)?.id;
        if (userId !== undefined && members.delete(userId)) say('user_left', userId);
        return;
      }
      case 'RoomDeleted':
        endForDeletedRoom(channel, roomId);
        return;
      default:
        return;
    }
  }
}
