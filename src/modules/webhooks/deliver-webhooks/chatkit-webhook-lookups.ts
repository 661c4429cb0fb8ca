import { RoomDocument, roomsProjection } from '../../../../projections/rooms/rooms.projection';
import { UserDocument, usersProjection } from '../../../../projections/users/users.projection';
import { Clock, systemClock } from '../../../shared/domain/clock';
import { positionAfter, type LogPosition, type RecordedEvent } from '../../../shared/domain/event';
import type { EventStore } from '../../../shared/ports/event-store.port';
import { SentMessages } from '../../messages/sent-messages';
import { PresenceState, PresenceTracker, PresenceWatch } from '../../presence/presence-tracker';
import { roomDecider, RoomState, roomStream } from '../../rooms/domain/room.decider';
import type { RoomEvent } from '../../rooms/domain/room.events';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { userStream } from '../../users/domain/user.decider';
import type { UserEvent } from '../../users/domain/user.events';
import { presentUser } from '../../users/presentation/user.presenter';
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

type RoomDocumentEvent = Parameters<typeof roomsProjection.evolve>[1];
/** The folds here keep one document in memory, not in a read model. */
const NO_TARGET = { collection: '', id: '' };

/** Events read per page of a stream. */
const PAGE = 500;

/**
 * The worker's answers to the Chatkit mapping's lookups (`ChatkitWebhookContext`), for one log
 * event. Rooms (with their members) and users are folded from their streams in the log up to
 * that event, opened when read, with the projections' own folds: a payload says what was true
 * when the change happened, whatever came after (a room deleted since, a member removed), and
 * nothing of it is kept. A message's sender and creation come from its room's timeline,
 * presence from the tracker (see OFFLINE_PRESENCE_WINDOW_MS), attachments with fresh links.
 */
export interface ChatkitWebhookLookupsOptions {
  /** The log, opened as read (the sealing store). */
  readonly events: EventStore;
  readonly sentMessages: SentMessages;
  /** This process's tracker (the API's in the embedded server; a projector worker's own, over the shared ephemeral bus). */
  readonly presence: PresenceTracker;
  /** An attachment part's attachment with fresh links (`renderAttachment`). */
  readonly attachment: ChatkitWebhookContext['attachment'];
  readonly clock?: Clock;
}

export class ChatkitWebhookLookups {
  private readonly clock: Clock;
  constructor(private readonly options: ChatkitWebhookLookupsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The lookups for the log event at `position`. */
  at(position: LogPosition): ChatkitWebhookContext {
    return {
      room: async (instanceId, roomId) => {
        const { doc, members } = await this.roomAt(instanceId, roomId, position);
        return doc ? { ...presentRoom(6, doc, [...members.keys()]) } : null;
      },
      users: async (instanceId, userIds) => {
        const docs = await Promise.all([...new Set(userIds)].map((id) => this.userAt(instanceId, id, position)));
        return docs.filter((d): d is UserDocument => d !== null).map((d) => ({ ...presentUser(d) }));
      },
      messageOrigin: async (instanceId, roomId, messageId) => {
        const sent = await this.options.sentMessages.find(instanceId, roomId, messageId);
        return sent ? { user_id: sent.userId, created_at: sent.createdAt } : null;
      },
      offlineUserIds: async (instanceId, userIds, sentAt) => {
        if (this.clock.now().getTime() - Date.parse(sentAt) > OFFLINE_PRESENCE_WINDOW_MS) return null;
        const states = await Promise.all(userIds.map((id) => this.firstState(instanceId, id)));
        return userIds.filter((_, i) => states[i] === 'offline');
      },
      attachment: this.options.attachment,
    };
  }

  private async roomAt(instanceId: string, roomId: string, position: LogPosition): Promise<{ doc: RoomDocument | null; members: RoomState['members'] }> {
    let doc: RoomDocument | null = null;
    let state = roomDecider.initialState();
    const stream = roomStream(instanceId, roomId);
    for await (const event of this.upTo(stream, position)) {
      if ((roomsProjection.handles as readonly string[]).includes(event.type)) doc = roomsProjection.evolve(doc, event as RoomDocumentEvent, NO_TARGET);
      state = roomDecider.evolve(state, event as RecordedEvent<RoomEvent>);
    }
    return { doc, members: state.members };
  }

  private async userAt(instanceId: string, userId: string, position: LogPosition): Promise<UserDocument | null> {
    let doc: UserDocument | null = null;
    for await (const event of this.upTo(userStream(instanceId, userId), position)) {
      doc = usersProjection.evolve(doc, event as RecordedEvent<UserEvent>, NO_TARGET);
    }
    return doc;
  }

  /** The stream's events (opened) at or before `position`, a page at a time. */
  private async *upTo(stream: string, position: LogPosition): AsyncGenerator<RecordedEvent> {
    for (let from = 0; ; from += PAGE) {
      const page = await this.options.events.readStream(stream, { fromRevision: from, maxCount: PAGE });
      for (const event of page) {
        if (positionAfter(event.position, position)) return;
        yield event;
      }
      if (page.length < PAGE) return;
    }
  }

  /** The user's presence as a watch first tells it: truthful across processes (bounded by the tracker's grace and answer wait). */
  private firstState(instanceId: string, userId: string): Promise<PresenceState> {
    return new Promise((resolve) => {
      let state: PresenceState | undefined;
      let watch: PresenceWatch | undefined;
      watch = this.options.presence.watch(instanceId, userId, (s) => {
        if (state) return;
        state = s;
        resolve(s);
        watch?.stop(); // told before watch() returned: stopped below instead
      });
      if (state) watch.stop();
    });
  }
}
