import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { badRequest } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import { parseChatApiVersion } from '../../../shared/http/chatkit-route';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { chatkitEvent } from '../../../shared/subscriptions/wire-event';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { checkpointName } from '../../../../projections/projection';
import { cursorsProjection } from '../../../../projections/cursors/cursors.projection';
import { messagesProjection } from '../../../../projections/messages/messages.projection';
import { membershipsProjection } from '../../../../projections/rooms/memberships.projection';
import { roomsProjection } from '../../../../projections/rooms/rooms.projection';
import { usersProjection } from '../../../../projections/users/users.projection';
import { mutesProjection } from '../../../../projections/mutes/mutes.projection';
import { MutesReadModel } from '../../mutes/mutes.read-model';
import { CursorsReadModel } from '../../cursors/cursors.read-model';
import { userCursorsKey } from '../../cursors/cursor-live-keys';
import { cursorOfEvent } from '../../cursors/presentation/cursor.presenter';
import { RoomMembersAdded, RoomMembersRemoved } from '../../rooms/domain/room.events';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { Access } from '../../roles/access-rules';
import { userNotFound, userStream } from '../../users/domain/user.decider';
import { presentUser } from '../../users/presentation/user.presenter';
import { UsersReadModel } from '../../users/users.read-model';
import { Restrictions } from '../../bans/restrictions';
import { UserBanned, UserUnbanned } from '../../bans/domain/restriction.events';
import { UserMuted, UserUnmuted } from '../../mutes/domain/mute.events';
import { mutesStream } from '../../mutes/domain/mutes.decider';
import { parseUserParleyEvents } from './parley-events';

/** Routing key for membership changes that concern one user. */
const membershipKey = (instanceId: string, userId: string) => `memberships-of:${instanceId}.${userId}`;
/** Routing key for every room update and deletion of an instance: each subscription keeps those of its rooms. */
const changedRoomsKey = (instanceId: string) => `rooms-changed:${instanceId}`;
/** Routing key for every user deletion of an instance: a deleted user's mutes go with them, and the subscriptions showing mutes say so. */
const deletedUsersKey = (instanceId: string) => `users-deleted:${instanceId}`;

const ROUTED_EVENTS = new Set(['RoomUpdated', 'RoomDeleted', 'RoomMembersAdded', 'RoomMembersRemoved', 'UserBanned', 'UserUnbanned', 'UserDeleted']);

/** What the initial state and the rooms of later events are read from. */
const USER_EVENTS_PROJECTIONS = [
  usersProjection,
  roomsProjection,
  membershipsProjection,
  cursorsProjection,
  messagesProjection,
  mutesProjection,
].map(checkpointName);

/**
 * `SUBSCRIBE /users` (v6, and v2 alike): the events of the token's user. `initial_state`
 * carries `current_user`, the user's `rooms` (with `unread_count` and `last_message_at`) and
 * `cursors` (and on v6 Parley's additive `muted_user_ids`, who the user muted: the JS, Swift and
 * Android SDKs read the three fields they know by name and ignore others); then `added_to_room`,
 * `removed_from_room`, `room_updated`, `room_deleted` and `new_cursor`, in log order, and on v6
 * the Parley events the subscription asks for with `parley_events` (`parley-events.ts`:
 * `user_muted`, `user_unmuted`). An event that shows a room waits until the read models reflect
 * it (later events wait behind it), so the rooms shown are never older than the event that
 * announced them; the others go out at once.
 */
@Injectable()
export class UserEventsSubscription implements OnModuleInit {
  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly users: UsersReadModel,
    private readonly rooms: RoomsReadModel,
    private readonly cursors: CursorsReadModel,
    private readonly mutes: MutesReadModel,
    private readonly restrictions: Restrictions,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) => {
      if (!ROUTED_EVENTS.has(event.type)) return [];
      const stream = parseStreamName(event.streamName);
      if (!stream) return [];
      if (event.type === 'UserDeleted') return stream.category === 'user' ? [deletedUsersKey(stream.instanceId)] : [];
      if (event.type === 'RoomUpdated' || event.type === 'RoomDeleted') return [changedRoomsKey(stream.instanceId)];
      if (event.type === 'UserBanned' || event.type === 'UserUnbanned') {
        const { user_id, room_id } = (event as RecordedEvent<UserBanned | UserUnbanned>).data;
        return room_id === undefined ? [] : [membershipKey(stream.instanceId, user_id)];
      }
      const userIds =
        event.type === 'RoomMembersAdded'
          ? (event as RecordedEvent<RoomMembersAdded>).data.members.map((m) => m.user_id)
          : (event as RecordedEvent<RoomMembersRemoved>).data.user_ids;
      return userIds.map((u) => membershipKey(stream.instanceId, u));
    });
    this.routes.register('/services/chatkit/:version/:instanceId/users', Access.permission('user:get'), (context, channel) =>
      this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId } = context.params;
    const version = parseChatApiVersion(context.params.version);
    const userId = context.actor.userId;
    if (!userId) throw badRequest('missing_user', 'The token names no user (sub) whose events to stream');
    const showsMutes = parseUserParleyEvents(context.query.get('parley_events'), version).has('mutes');

    const roomJson = async (roomId: string) => {
      const room = await this.rooms.find(instanceId, roomId);
      if (!room) return null;
      const [withMembers] = await this.rooms.withMembers([room], userId);
      return presentRoom(version, room, withMembers.memberIds, withMembers.unreadCount);
    };
    /** What the client was shown: its rooms, the cursor position of each room, and (asked for) who it muted. */
    interface Shown {
      readonly roomIds: Set<string>;
      readonly cursorAt: Map<string, number>;
      readonly mutedIds: Set<string>;
    }
    const deliver = (event: RecordedEvent, { roomIds, cursorAt, mutedIds }: Shown): void | Promise<void> => {
      const timestamp = event.metadata.occurred_at ?? event.recordedAt;
      const push = (name: string, data: unknown) => channel.push({ id: event.position, body: chatkitEvent(name, data, timestamp) });
      const roomId = parseStreamName(event.streamName)?.id ?? '';
      // The room as the read models show it once they reflect this event (its members, unread count).
      const roomAt = async (then: (room: unknown) => void) => {
        await this.readYourWrites.waitFor(event.position, USER_EVENTS_PROJECTIONS);
        const room = await roomJson(roomId);
        if (room) then(room);
      };
      switch (event.type) {
        case 'RoomMembersAdded': {
          const joined = (event as RecordedEvent<RoomMembersAdded>).data.members.some((m) => m.user_id === userId);
          if (!joined || roomIds.has(roomId)) return;
          return roomAt((room) => {
            roomIds.add(roomId);
            push('added_to_room', { room });
          });
        }
        case 'RoomMembersRemoved': {
          const left = (event as RecordedEvent<RoomMembersRemoved>).data.user_ids.includes(userId);
          if (left && roomIds.delete(roomId)) push('removed_from_room', { room_id: roomId });
          return;
        }
        // A room ban takes the room out of the user's view (a shadow ban must not show), its lifting brings it back.
        case 'UserBanned': {
          const { user_id, room_id, shadow } = (event as RecordedEvent<UserBanned>).data;
          if (user_id === userId && room_id !== undefined && !shadow && roomIds.delete(room_id)) push('removed_from_room', { room_id });
          return;
        }
        case 'UserUnbanned': {
          const { user_id, room_id } = (event as RecordedEvent<UserUnbanned>).data;
          if (user_id !== userId || room_id === undefined || roomIds.has(room_id)) return;
          return (async () => {
            await this.readYourWrites.waitFor(event.position, USER_EVENTS_PROJECTIONS);
            const room = await this.rooms.find(instanceId, room_id);
            if (!room) return;
            const [withMembers] = await this.rooms.withMembers([room], userId);
            if (!withMembers.memberIds.includes(userId)) return;
            roomIds.add(room_id);
            push('added_to_room', { room: presentRoom(version, room, withMembers.memberIds, withMembers.unreadCount) });
          })();
        }
        case 'RoomUpdated':
          if (roomIds.has(roomId)) return roomAt((room) => push('room_updated', { room }));
          return;
        case 'RoomDeleted':
          if (roomIds.delete(roomId)) push('room_deleted', { room_id: roomId });
          return;
        case 'UserDeleted': {
          const deletedId = parseStreamName(event.streamName)?.id;
          if (deletedId === userId) {
            channel.end(404, { error: 'services/chatkit/not_found/user_not_found', error_description: `The user does not exist: "${userId}"` });
          } else if (deletedId !== undefined && mutedIds.delete(deletedId)) {
            // A deleted user's mutes go with them (the same id created again is someone else).
            push('user_unmuted', { user_id: deletedId });
          }
          return;
        }
        // Mutes show as they change, each once: the initial read may already show a mute the buffer then delivers.
        case 'UserMuted': {
          const { muted_user_id, muted_at } = (event as RecordedEvent<UserMuted>).data;
          if (!mutedIds.has(muted_user_id)) {
            mutedIds.add(muted_user_id);
            push('user_muted', { user_id: muted_user_id, muted_at });
          }
          return;
        }
        case 'UserUnmuted': {
          const { muted_user_id } = (event as RecordedEvent<UserUnmuted>).data;
          if (mutedIds.delete(muted_user_id)) push('user_unmuted', { user_id: muted_user_id });
          return;
        }
        default: {
          const cursor = cursorOfEvent(event);
          if (!cursor || cursor.user_id !== userId) return;
          if ((cursorAt.get(cursor.room_id) ?? -1) >= cursor.position) return; // already in initial_state
          cursorAt.set(cursor.room_id, cursor.position);
          push('new_cursor', cursor);
        }
      }
    };

    await openCatchUpThenLive<Shown>({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'chatkit',
      keys: [
        membershipKey(instanceId, userId),
        changedRoomsKey(instanceId),
        userCursorsKey(instanceId, userId),
        // The user's own deletion ends the stream; asking for mutes, every deletion of the
        // instance is followed (the user's own among them: one key, so it arrives once).
        ...(showsMutes ? [mutesStream(instanceId, userId), deletedUsersKey(instanceId)] : [userStream(instanceId, userId)]),
      ],
      projections: USER_EVENTS_PROJECTIONS,
      readInitial: async () => {
        const user = await this.users.find(instanceId, userId);
        if (!user) throw userNotFound(userId);
        const memberOf = await this.rooms.roomsOf(instanceId, userId);
        const banned = await this.restrictions.bannedFrom(instanceId, userId, memberOf.map((room) => room.id));
        const myRooms = await this.rooms.withMembers(memberOf.filter((room) => !banned.has(room.id)), userId);
        const snapshot = await this.cursors.snapshotOfUser(instanceId, userId);
        const muted = version === 6 ? (await this.mutes.of(instanceId, userId)).map((m) => m.muted_user_id) : undefined;
        channel.push({
          id: this.liveLog.position ?? '0',
          body: chatkitEvent(
            'initial_state',
            {
              current_user: presentUser(user),
              rooms: myRooms.map((r) => presentRoom(version, r.room, r.memberIds, r.unreadCount)),
              cursors: snapshot.cursors,
              ...(muted && { muted_user_ids: muted }),
            },
            new Date().toISOString(),
          ),
        });
        return {
          roomIds: new Set(myRooms.map((r) => r.room.id)),
          cursorAt: new Map(snapshot.cursors.map((c) => [c.room_id, c.position])),
          mutedIds: new Set(showsMutes ? muted : []),
        };
      },
      deliver,
    });
  }
}
