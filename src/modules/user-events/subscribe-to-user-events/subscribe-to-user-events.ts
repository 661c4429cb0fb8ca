import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/read-your-writes';
import { badRequest } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName, streamName } from '../../../shared/domain/streams';
import { parseChatApiVersion } from '../../../shared/http/chatkit-route';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { chatkitEvent } from '../../../shared/subscriptions/wire-event';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { CursorsReadModel } from '../../cursors/cursors.read-model';
import { cursorOfEvent } from '../../cursors/presentation/cursor.presenter';
import { roomStream } from '../../rooms/domain/room.decider';
import { RoomMembersAdded, RoomMembersRemoved } from '../../rooms/domain/room.events';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { userNotFound, userStream } from '../../users/domain/user.decider';
import { presentUser } from '../../users/presentation/user.presenter';
import { UsersReadModel } from '../../users/users.read-model';

/** Routing key for membership changes that concern one user. */
const membershipKey = (instanceId: string, userId: string) => `memberships-of:${instanceId}.${userId}`;

/**
 * `SUBSCRIBE /users` (v6, and v2 alike): the events of the token's user. `initial_state`
 * carries `current_user`, the user's `rooms` (with `unread_count` and `last_message_at`) and
 * `cursors`; then `added_to_room`, `removed_from_room`, `room_updated`, `room_deleted` and
 * `new_cursor`. Events are handled one at a time in log order, each after the read models
 * reflect it, so the rooms shown are never older than the event that announced them.
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
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) => {
      if (event.type !== 'RoomMembersAdded' && event.type !== 'RoomMembersRemoved') return [];
      const stream = parseStreamName(event.streamName);
      if (!stream) return [];
      const userIds =
        event.type === 'RoomMembersAdded'
          ? (event as RecordedEvent<RoomMembersAdded>).data.members.map((m) => m.user_id)
          : (event as RecordedEvent<RoomMembersRemoved>).data.user_ids;
      return userIds.map((u) => membershipKey(stream.instanceId, u));
    });
    this.routes.register('/services/chatkit/:version/:instanceId/users', (context, channel) => this.open(context, channel));
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId } = context.params;
    const version = parseChatApiVersion(context.params.version);
    const userId = context.actor.userId;
    if (!userId) throw badRequest('missing_user', 'The token names no user (sub) whose events to stream');

    const roomListeners = new Map<string, () => void>();
    let ready = false;
    const buffer: RecordedEvent[] = [];
    let chain = Promise.resolve();
    const onEvent = (event: RecordedEvent) => {
      if (!ready) {
        buffer.push(event);
        return;
      }
      chain = chain.then(() => handle(event)).catch(() => undefined);
    };
    const watchRoom = (roomId: string) => {
      if (!roomListeners.has(roomId)) roomListeners.set(roomId, this.liveLog.on(roomStream(instanceId, roomId), onEvent));
    };
    const unwatchRoom = (roomId: string) => {
      roomListeners.get(roomId)?.();
      roomListeners.delete(roomId);
    };
    const offMemberships = this.liveLog.on(membershipKey(instanceId, userId), onEvent);
    const offCursors = this.liveLog.on(streamName('cursor', instanceId, userId), onEvent);
    const offUser = this.liveLog.on(userStream(instanceId, userId), onEvent);
    channel.onClose(() => {
      offMemberships();
      offCursors();
      offUser();
      for (const off of roomListeners.values()) off();
    });

    if (this.liveLog.position) await this.readYourWrites.waitFor(this.liveLog.position);
    const user = await this.users.find(instanceId, userId);
    if (!user) throw userNotFound(userId);
    const myRooms = await this.rooms.withMembers(await this.rooms.roomsOf(instanceId, userId), userId);
    const snapshot = await this.cursors.snapshotOfUser(instanceId, userId);
    const roomIds = new Set(myRooms.map((r) => r.room.id));
    const cursorAt = new Map(snapshot.cursors.map((c) => [c.room_id, c.position]));
    for (const id of roomIds) watchRoom(id);
    channel.push({
      id: this.liveLog.position ?? '0',
      body: chatkitEvent(
        'initial_state',
        {
          current_user: presentUser(user),
          rooms: myRooms.map((r) => presentRoom(version, r.room, r.memberIds, r.unreadCount)),
          cursors: snapshot.cursors,
        },
        new Date().toISOString(),
      ),
    });

    const roomJson = async (roomId: string) => {
      const room = await this.rooms.find(instanceId, roomId);
      if (!room) return null;
      const [withMembers] = await this.rooms.withMembers([room], userId);
      return presentRoom(version, room, withMembers.memberIds, withMembers.unreadCount);
    };
    const handle = async (event: RecordedEvent): Promise<void> => {
      const timestamp = event.metadata.occurred_at ?? event.recordedAt;
      const push = (name: string, data: unknown) => channel.push({ id: event.position, body: chatkitEvent(name, data, timestamp) });
      const roomId = parseStreamName(event.streamName)?.id ?? '';
      await this.readYourWrites.waitFor(event.position);
      switch (event.type) {
        case 'RoomMembersAdded': {
          const joined = (event as RecordedEvent<RoomMembersAdded>).data.members.some((m) => m.user_id === userId);
          if (!joined || roomIds.has(roomId)) return;
          const room = await roomJson(roomId);
          if (!room) return;
          roomIds.add(roomId);
          watchRoom(roomId);
          push('added_to_room', { room });
          return;
        }
        case 'RoomMembersRemoved': {
          const left = (event as RecordedEvent<RoomMembersRemoved>).data.user_ids.includes(userId);
          if (!left || !roomIds.delete(roomId)) return;
          unwatchRoom(roomId);
          push('removed_from_room', { room_id: roomId });
          return;
        }
        case 'RoomUpdated': {
          if (!roomIds.has(roomId)) return;
          const room = await roomJson(roomId);
          if (room) push('room_updated', { room });
          return;
        }
        case 'RoomDeleted':
          if (!roomIds.delete(roomId)) return;
          unwatchRoom(roomId);
          push('room_deleted', { room_id: roomId });
          return;
        case 'UserDeleted':
          channel.end(404, { error: 'services/chatkit/not_found/user_not_found', error_description: `The user does not exist: "${userId}"` });
          return;
        default: {
          const cursor = cursorOfEvent(event);
          if (!cursor || cursor.user_id !== userId) return;
          if ((cursorAt.get(cursor.room_id) ?? -1) >= cursor.position) return; // already in initial_state
          cursorAt.set(cursor.room_id, cursor.position);
          push('new_cursor', cursor);
        }
      }
    };
    ready = true;
    for (const event of buffer.splice(0)) onEvent(event);
  }
}
