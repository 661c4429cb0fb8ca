import { RoomDocument, roomsProjection } from '../../../../projections/rooms/rooms.projection';
import { UserDocument, usersProjection } from '../../../../projections/users/users.projection';
import { Clock, systemClock } from '../../../shared/domain/clock';
import type { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import { INSTANCE_WIPED } from '../../../shared/domain/instance-wipe';
import { parseStreamName } from '../../../shared/domain/streams';
import type { EventStore } from '../../../shared/ports/event-store.port';
import { SentMessages } from '../../messages/sent-messages';
import { PresenceState, PresenceTracker, PresenceWatch } from '../../presence/presence-tracker';
import { roomDecider, RoomState, roomStream } from '../../rooms/domain/room.decider';
import type { RoomEvent } from '../../rooms/domain/room.events';
import { presentRoom } from '../../rooms/presentation/room.presenter';
import { userStream } from '../../users/domain/user.decider';
import type { UserDeleted, UserEvent } from '../../users/domain/user.events';
import type { RoomDeleted } from '../../rooms/domain/room.events';
import { presentUser } from '../../users/presentation/user.presenter';
import type { ChatkitWebhookContext } from '../domain/chatkit-webhook-events';
import { DestroyedContentWatch } from './destroyed-content-watch';
import { StreamFoldsAt } from './stream-folds-at';

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

/**
 * Rooms and users whose folds are kept in memory, the least recently used dropped first: at
 * most 1,000 rooms holding 200,000 members between them (a member is an id and its creation
 * time, some 150 bytes in a Map: about 30 MB at most), and 10,000 users (a document each, its
 * fields capped by the API). A room or user not kept is folded from the start once, then kept.
 */
const ROOMS_CACHED = 1_000;
const ROOM_MEMBERS_CACHED = 200_000;
const USERS_CACHED = 10_000;

/**
 * The events after which kept folds may hold content whose keys are gone: a user's or a room's
 * delete destroys its profile or name (a user's erasure deletes the user first), an instance
 * wipe every key of the instance.
 */
const DESTROYING: readonly string[] = ['UserDeleted', 'RoomDeleted', INSTANCE_WIPED] satisfies ((UserDeleted | RoomDeleted)['type'] | typeof INSTANCE_WIPED)[];

interface RoomFold {
  readonly doc: RoomDocument | null;
  readonly state: RoomState;
}

/**
 * The worker's answers to the Chatkit mapping's lookups (`ChatkitWebhookContext`), for one log
 * event. Rooms (with their members) and users are folded from their streams in the log up to
 * that event, opened when read, with the projections' own folds: a payload says what was true
 * when the change happened, whatever came after (a room deleted since, a member removed). The
 * folds are kept in memory per stream (`StreamFoldsAt`), so that a delivery reads only what its
 * streams gained since the last one; kept content is dropped as soon as a look at the log finds
 * it destroyed (`DestroyedContentWatch`, before every lookup), so a payload never shows what a
 * fold from the start would read as erased. Nothing of it is written anywhere. A message's sender and creation come from its room's timeline,
 * presence from the tracker (see OFFLINE_PRESENCE_WINDOW_MS), attachments with fresh links.
 */
export interface ChatkitWebhookLookupsOptions {
  /** The log, opened as read (the sealing store). */
  readonly events: EventStore;
  readonly sentMessages: SentMessages;
  /**
   * Who of `userIds` is offline now: this process's tracker (`offlineNowFrom`: the API's in the
   * embedded server; a projector worker's own, over the shared ephemeral bus), or, on the embedded
   * server's projector thread, the request thread's tracker asked by message.
   */
  readonly offlineNow: OfflineNow;
  /** An attachment part's attachment with fresh links (`renderAttachment`). */
  readonly attachment: ChatkitWebhookContext['attachment'];
  readonly clock?: Clock;
}

export class ChatkitWebhookLookups {
  private readonly clock: Clock;
  private readonly rooms: StreamFoldsAt<RoomFold>;
  private readonly userDocs: StreamFoldsAt<UserDocument | null>;
  private readonly destroyed: DestroyedContentWatch;

  constructor(private readonly options: ChatkitWebhookLookupsOptions) {
    this.clock = options.clock ?? systemClock;
    this.rooms = new StreamFoldsAt<RoomFold>(options.events, {
      cached: ROOMS_CACHED,
      maxWeight: ROOM_MEMBERS_CACHED,
      weight: ({ state }) => 1 + state.members.size,
      initial: () => ({ doc: null, state: roomDecider.initialState() }),
      evolve: ({ doc, state }, event) => ({
        doc: (roomsProjection.handles as readonly string[]).includes(event.type) ? roomsProjection.evolve(doc, event as RoomDocumentEvent, NO_TARGET) : doc,
        state: roomDecider.evolve(state, event as RecordedEvent<RoomEvent>),
      }),
    });
    this.userDocs = new StreamFoldsAt<UserDocument | null>(options.events, {
      cached: USERS_CACHED,
      initial: () => null,
      evolve: (doc, event) => usersProjection.evolve(doc, event as RecordedEvent<UserEvent>, NO_TARGET),
    });
    this.destroyed = new DestroyedContentWatch(options.events, DESTROYING, (event) => {
      const instanceId = parseStreamName(event.streamName)?.instanceId;
      if (event.type === INSTANCE_WIPED) {
        if (instanceId === undefined) return;
        this.rooms.destroyed({ instanceId }, event.position);
        this.userDocs.destroyed({ instanceId }, event.position);
      } else (event.type === 'RoomDeleted' ? this.rooms : this.userDocs).destroyed({ stream: event.streamName }, event.position);
    });
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
        return sent ? { user_id: sent.userId, created_at: sent.createdAt, ...(sent.shadow && { shadow: sent.shadow }) } : null;
      },
      offlineUserIds: async (instanceId, userIds, sentAt) => {
        if (this.clock.now().getTime() - Date.parse(sentAt) > OFFLINE_PRESENCE_WINDOW_MS) return null;
        return this.options.offlineNow(instanceId, userIds);
      },
      attachment: this.options.attachment,
    };
  }

  private async roomAt(instanceId: string, roomId: string, position: LogPosition): Promise<{ doc: RoomDocument | null; members: RoomState['members'] }> {
    await this.destroyed.catchUp();
    const { doc, state } = await this.rooms.at(roomStream(instanceId, roomId), position);
    return { doc, members: state.members };
  }

  private async userAt(instanceId: string, userId: string, position: LogPosition): Promise<UserDocument | null> {
    await this.destroyed.catchUp();
    return this.userDocs.at(userStream(instanceId, userId), position);
  }
}

/** Of `userIds`, those offline now (as presence first tells it), in their order. */
export type OfflineNow = (instanceId: string, userIds: readonly string[]) => Promise<string[]>;

/** Who is offline now, as this process's tracker's watches first tell it: truthful across processes (bounded by the tracker's grace and answer wait). */
export function offlineNowFrom(presence: PresenceTracker): OfflineNow {
  return async (instanceId, userIds) => {
    const states = await Promise.all(userIds.map((id) => firstState(presence, instanceId, id)));
    return userIds.filter((_, i) => states[i] === 'offline');
  };
}

function firstState(presence: PresenceTracker, instanceId: string, userId: string): Promise<PresenceState> {
  return new Promise((resolve) => {
    let state: PresenceState | undefined;
    let watch: PresenceWatch | undefined;
    watch = presence.watch(instanceId, userId, (s) => {
      if (state) return;
      state = s;
      resolve(s);
      watch?.stop(); // told before watch() returned: stopped below instead
    });
    if (state) watch.stop();
  });
}
