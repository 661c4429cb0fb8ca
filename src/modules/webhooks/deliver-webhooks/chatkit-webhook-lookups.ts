import { Inject, Injectable } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { CLOCK } from '../../../shared/application/tokens';
import type { Clock } from '../../../shared/domain/clock';
import type { LogPosition } from '../../../shared/domain/event';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { SentMessages } from '../../messages/sent-messages';
import { PresenceState, PresenceTracker, PresenceWatch } from '../../presence/presence-tracker';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { presentUser } from '../../users/presentation/user.presenter';
import { UsersReadModel } from '../../users/users.read-model';
import type { ChatkitWebhookContext } from '../domain/chatkit-webhook-events';

/**
 * How long after a message's send presence still says who was offline for it. Presence is
 * in-memory and has no history (nothing of it reaches the log), so "offline when it was sent"
 * is read at delivery time: a delivery goes out within moments of the send, and one made
 * later (a receiver down for a while, a redelivery, a replay) would report who is offline at
 * that later time, which says nothing about the send: such a delivery carries no
 * `v1.message_sent_user_offline` (a push for a message long gone by would be wrong anyway).
 */
export const OFFLINE_PRESENCE_WINDOW_MS = 60_000;

/** The read models a payload reads (rooms with their members, users), awaited up to the event delivered. */
const FOLDING = ['RoomCreated', 'RoomUpdated', 'RoomMembersAdded', 'RoomMembersRemoved', 'UserCreated', 'UserUpdated'];

/**
 * The worker's answers to the Chatkit mapping's lookups (`ChatkitWebhookContext`), for one log
 * event: rooms and users from the read models once they have folded the log up to that event
 * (a room and its first members arrive in the same append as the webhook that names them),
 * a message's sender and creation from its room's timeline in the log, presence from the
 * tracker (see OFFLINE_PRESENCE_WINDOW_MS), attachments with fresh signed links.
 */
@Injectable()
export class ChatkitWebhookLookups {
  constructor(
    private readonly rooms: RoomsReadModel,
    private readonly users: UsersReadModel,
    private readonly sentMessages: SentMessages,
    private readonly presence: PresenceTracker,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
    @Inject(READ_YOUR_WRITES) private readonly projections: ReadYourWrites,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The lookups for the log event at `position`. */
  at(position: LogPosition): ChatkitWebhookContext {
    let folded: Promise<void> | undefined;
    const caughtUp = () => (folded ??= this.projections.waitFor(position, { folding: FOLDING }));
    return {
      room: async (instanceId, roomId) => {
        await caughtUp();
        const room = await this.rooms.find(instanceId, roomId);
        return room ? { ...presentRoom(6, room, await this.rooms.memberIds(instanceId, roomId)) } : null;
      },
      users: async (instanceId, userIds) => {
        await caughtUp();
        return (await this.users.findMany(instanceId, userIds)).map((u) => ({ ...presentUser(u) }));
      },
      messageOrigin: async (instanceId, roomId, messageId) => {
        const sent = await this.sentMessages.find(instanceId, roomId, messageId);
        return sent ? { user_id: sent.userId, created_at: sent.createdAt } : null;
      },
      offlineUserIds: async (instanceId, userIds, sentAt) => {
        if (this.clock.now().getTime() - Date.parse(sentAt) > OFFLINE_PRESENCE_WINDOW_MS) return null;
        const states = await Promise.all(userIds.map((id) => this.firstState(instanceId, id)));
        return userIds.filter((_, i) => states[i] === 'offline');
      },
      attachment: (instanceId, roomId, attachment) => ({ ...this.attachments.render(instanceId, roomId, attachment) }),
    };
  }

  /** The user's presence as a watch first tells it: truthful across processes (bounded by the tracker's grace and answer wait). */
  private firstState(instanceId: string, userId: string): Promise<PresenceState> {
    return new Promise((resolve) => {
      let state: PresenceState | undefined;
      let watch: PresenceWatch | undefined;
      watch = this.presence.watch(instanceId, userId, (s) => {
        if (state) return;
        state = s;
        resolve(s);
        watch?.stop(); // told before watch() returned: stopped below instead
      });
      if (state) watch.stop();
    });
  }
}
