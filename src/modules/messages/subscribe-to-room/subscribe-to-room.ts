import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { unprocessable } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { ChatApiVersion, parseChatApiVersion } from '../../../shared/http/chatkit-route';
import { EPHEMERAL_BUS, EphemeralBus } from '../../../shared/ports/ephemeral-bus.port';
import { EventChannel, WireEvent } from '../../../shared/subscriptions/event-channel';
import { chatkitEvent, endForDeletedRoom } from '../../../shared/subscriptions/wire-event';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { MessageDocument, messageDocumentFrom, TOMBSTONE_TEXT } from '../../../../projections/messages/messages.projection';
import { roomStream } from '../../rooms/domain/room.decider';
import { RoomAccess } from '../../rooms/room-access';
import { typingChannel, TypingSignal } from '../../rooms/typing-channel';
import { numericLastEventId, SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { Access } from '../../roles/access-rules';
import { messagesStream } from '../domain/message.decider';
import { MessageDeleted, MessageEdited, MessageEvent, MessageSent, ReactionEvent } from '../domain/message.events';
import { ERASED_REACTION_TYPE } from '../domain/message.personal-data';
import { shownIn, shownTo, visibleTo } from '../domain/message-visibility';
import { MessagePinned, pinChangeFlags, PinEvent } from '../../pins/domain/pin.events';
import { pinsStream } from '../../pins/domain/pins.decider';

/** A pin as `message_pinned` and the pins list show it. */
const pinShown = ({ message_id, pinned_by, pinned_at, until }: MessagePinned['data']) => ({
  message_id,
  ...(pinned_by !== undefined && { pinned_by }),
  pinned_at,
  ...(until !== undefined && { until }),
});
import { RoomEvent } from '../../rooms/domain/room.events';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../presentation/attachments.port';
import { presentMessage } from '../presentation/message.presenter';
import { MESSAGE_READS, MessagesReadModel, shownToViewer } from '../messages.read-model';
import { ParleyEventFamily, parseParleyEvents } from './parley-events';
import { ThreadsReadModel } from '../../threads/threads.read-model';
import { Restrictions } from '../../bans/restrictions';

export const DEFAULT_MESSAGE_LIMIT = 20;
export const MAX_MESSAGE_LIMIT = 100;

/** One open room subscription: what its live deliveries need, held once rather than captured per event. */
interface RoomSubscriber {
  readonly version: ChatApiVersion;
  readonly instanceId: string;
  readonly roomId: string;
  /** The subscribing user (absent for a token without one): messages sent under a shadow ban reach their sender only. */
  readonly userId?: string;
  readonly channel: EventChannel;
  /** The newest message id sent: live messages at or below it were replayed already. */
  lastId: number;
  /** v2 only: recent messages, for the tombstone a deletion sends (v6 sends the id alone). */
  readonly recent: Map<number, MessageDocument> | null;
  /** Parley's own live events the subscriber asked for (none unless asked: see `parseParleyEvents`). */
  readonly parleyEvents: ReadonlySet<ParleyEventFamily>;
}

/** A live message as every subscriber of one API version sees it, rendered once (transports encode it once too). */
interface LiveMessage {
  readonly doc: MessageDocument;
  /** The same object goes to every subscriber, so that transports can frame it once too. */
  readonly wire: WireEvent;
}

const RECENT_MESSAGES = 1000;

/**
 * `SUBSCRIBE /rooms/:roomId?message_limit=n` (v2 and v6): replays the newest messages oldest
 * first, or — resuming with `Last-Event-Id` — every message after that id, then goes live:
 * `new_message`, `message_deleted` (v6; v2 receives the DELETED tombstone as a `new_message`)
 * and `is_typing`, plus Parley's own events it asks for with `parley_events` (e.g.
 * `message_updated`, `reaction_added`). Event ids are message ids, so a client resumes where it left off.
 */
@Injectable()
export class RoomSubscription implements OnModuleInit {
  /** Live messages as already rendered per API version, shared by all subscribers. */
  private readonly rendered = new WeakMap<RecordedEvent, { 2?: LiveMessage; 6?: LiveMessage }>();

  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly access: RoomAccess,
    private readonly messages: MessagesReadModel,
    private readonly threads: ThreadsReadModel,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
    private readonly restrictions: Restrictions,
  ) {}

  onModuleInit(): void {
    this.routes.register(
      '/services/chatkit/:version/:instanceId/rooms/:roomId',
      Access.permission('room:messages:get', { room: 'roomId' }),
      (context, channel) => this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const version = parseChatApiVersion(context.params.version);
    const { instanceId, roomId } = context.params;
    const limit = parseMessageLimit(context.query.get('message_limit'));
    const resumeAfter = numericLastEventId(context.lastEventId);
    const parleyEvents = parseParleyEvents(context.query.get('parley_events'));
    await this.access.readable(instanceId, roomId, context.actor);

    const subscriber: RoomSubscriber = {
      version,
      instanceId,
      roomId,
      ...(context.actor.userId !== undefined && { userId: context.actor.userId }),
      channel,
      lastId: resumeAfter ?? 0,
      recent: version === 2 ? new Map() : null,
      parleyEvents,
    };
    const emitStored = (doc: MessageDocument) => {
      sentTo(subscriber, doc);
      const body = chatkitEvent('new_message', presentMessage(version, doc, this.attachments), doc.created_at);
      channel.push({ id: String(doc.id), body });
    };

    const offTyping = this.bus.subscribe(typingChannel(instanceId, roomId), (signal) => {
      const { user_id } = signal as TypingSignal;
      channel.push({ id: String(subscriber.lastId), body: chatkitEvent('is_typing', { user_id }, new Date().toISOString()) });
    });
    channel.onClose(offTyping);

    await openCatchUpThenLive({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'chatkit',
      keys: [messagesStream(instanceId, roomId), roomStream(instanceId, roomId), pinsStream(instanceId, roomId)],
      projections: MESSAGE_READS,
      readInitial: async () => {
        const viewer = await this.restrictions.shadowViewer(context.actor, roomId);
        if (resumeAfter !== undefined) {
          for (let after = resumeAfter; ; ) {
            const page = await this.messages.after(instanceId, roomId, after, 500, viewer);
            for (const doc of page) emitStored(doc);
            if (page.length < 500) break;
            after = page[page.length - 1].id;
          }
        } else if (limit > 0) {
          for (const doc of await this.messages.latest(instanceId, roomId, limit, viewer)) emitStored(doc);
        }
      },
      // The streams subscribed to hold a room's messages (their changes routed to it), the room's own events and its pins.
      deliver: (event) => this.deliverLive(event as RecordedEvent<MessageEvent | ReactionEvent | PinEvent | RoomEvent>, subscriber),
    });
  }

  /** Delivers one live event; returns a promise only when it must read first (v2 tombstones). */
  private deliverLive(event: RecordedEvent<MessageEvent | ReactionEvent | PinEvent | RoomEvent>, subscriber: RoomSubscriber): Promise<void> | void {
    switch (event.type) {
      case 'MessageSent': {
        // Who sees it where is one rule (message-visibility.ts): its thread, the room, or both.
        if (visibleTo(event.data, 'thread', subscriber.userId)) this.pushReply(event, subscriber);
        if (!visibleTo(event.data, 'room', subscriber.userId)) return;
        if (event.data.id <= subscriber.lastId) return; // already replayed
        const live = this.liveMessage(event, subscriber);
        sentTo(subscriber, live.doc);
        subscriber.channel.push(live.wire);
        return;
      }
      case 'MessageEdited': {
        const reply = event.data.parent_id !== undefined && subscriber.parleyEvents.has('threads') ? this.pushReplyEdit(event, subscriber) : undefined;
        const edit = subscriber.parleyEvents.has('edits') && shownIn(event.data, 'room') ? this.pushEdit(event, subscriber) : undefined;
        if (!reply) return edit;
        return edit ? reply.then(() => edit) : reply;
      }
      case 'MessageReactionAdded':
      case 'MessageReactionRemoved': {
        const { id, type, user_id } = event.data;
        // An erased reaction (its key destroyed) is no one's: nothing to show; one added under a shadow ban is its reactor's alone.
        if (!subscriber.parleyEvents.has('reactions') || type === ERASED_REACTION_TYPE || !shownTo(event.data, subscriber.userId)) return;
        const timestamp = event.metadata.occurred_at ?? event.recordedAt;
        const body =
          event.type === 'MessageReactionAdded'
            ? chatkitEvent('reaction_added', { message_id: id, type, user_id, created_at: event.data.created_at }, timestamp)
            : chatkitEvent('reaction_removed', { message_id: id, type, user_id }, timestamp);
        subscriber.channel.push({ id: String(subscriber.lastId), body });
        return;
      }
      case 'MessagePinned':
      case 'MessageUnpinned': {
        if (!subscriber.parleyEvents.has('pins')) return;
        // Pinned or unpinned under a shadow ban: its user's change alone.
        if (!shownTo(pinChangeFlags(event), subscriber.userId)) return;
        const timestamp = event.metadata.occurred_at ?? event.recordedAt;
        const body =
          event.type === 'MessagePinned'
            ? chatkitEvent('message_pinned', pinShown(event.data), timestamp)
            : chatkitEvent('message_unpinned', { message_id: event.data.message_id }, timestamp);
        subscriber.channel.push({ id: String(subscriber.lastId), body });
        return;
      }
      case 'MessageDeleted': {
        const reply = shownIn(event.data, 'thread') && subscriber.parleyEvents.has('threads') ? this.pushReplyDeletion(event, subscriber) : undefined;
        if (!shownIn(event.data, 'room')) return reply; // never shown in the room: nothing to take back there
        const deletion = this.pushDeletion(event, subscriber);
        return reply ? reply.then(() => deletion) : deletion;
      }
      case 'RoomDeleted':
        endForDeletedRoom(subscriber.channel, subscriber.roomId);
        return;
      default:
        return;
    }
  }

  /**
   * v6: `message_deleted` with the id; v2: the tombstone as a `new_message`, never the content.
   * Not for a message sent under a shadow ban, unless to its sender: the others never saw it.
   */
  private async pushDeletion(event: RecordedEvent<MessageDeleted>, subscriber: RoomSubscriber): Promise<void> {
    const { version, instanceId, roomId, channel } = subscriber;
    const { id, deleted_at } = event.data;
    const original = subscriber.recent?.get(id) ?? (await this.messages.stored(instanceId, roomId, id)) ?? undefined;
    if (original && !shownTo(original, subscriber.userId)) return;
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    if (version === 6) {
      channel.push({ id: String(subscriber.lastId), body: chatkitEvent('message_deleted', { message_id: id }, timestamp) });
      return;
    }
    const tombstone = {
      id,
      ...(original && { user_id: original.user_id }),
      room_id: roomId,
      text: TOMBSTONE_TEXT,
      ...(original && { created_at: original.created_at }),
      updated_at: deleted_at,
      deleted_at,
    };
    channel.push({ id: String(subscriber.lastId), body: chatkitEvent('new_message', tombstone, timestamp) });
  }

  /**
   * `message_updated`: the edited message whole, as the subscriber's API version shows it. The
   * event holds the new content; the read model the rest (sender, creation time), and a message
   * deleted since shows nothing.
   */
  private async pushEdit(event: RecordedEvent<MessageEdited>, subscriber: RoomSubscriber): Promise<void> {
    const { version, instanceId, roomId, channel } = subscriber;
    const stored = await this.messages.stored(instanceId, roomId, event.data.id);
    if (!stored || stored.deleted_at !== undefined || !shownToViewer(stored, subscriber.userId)) return;
    const doc: MessageDocument = { ...stored, parts: event.data.parts, updated_at: event.data.updated_at };
    subscriber.recent?.set(doc.id, doc);
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    channel.push({ id: String(subscriber.lastId), body: chatkitEvent('message_updated', presentMessage(version, doc, this.attachments), timestamp) });
  }

  /** `reply_updated` (asked for with `threads`): the edited reply whole, and its parent's id; a reply deleted since shows nothing. */
  private async pushReplyEdit(event: RecordedEvent<MessageEdited>, subscriber: RoomSubscriber): Promise<void> {
    const { version, instanceId, roomId, channel } = subscriber;
    const stored = await this.threads.reply(instanceId, roomId, event.data.id, subscriber.userId);
    if (!stored) return;
    const doc: MessageDocument = { ...stored, parts: event.data.parts, updated_at: event.data.updated_at };
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    const body = chatkitEvent('reply_updated', { parent_id: stored.parent_id, message: presentMessage(version, doc, this.attachments) }, timestamp);
    channel.push({ id: String(subscriber.lastId), body });
  }

  /**
   * `reply_deleted` (asked for with `threads`): the reply's id and its parent's. A reply sent under
   * a shadow ban was its sender's alone: the deletion names no sender, its document does.
   */
  private async pushReplyDeletion(event: RecordedEvent<MessageDeleted>, subscriber: RoomSubscriber): Promise<void> {
    const { id, parent_id } = event.data;
    if (!shownTo(event.data, undefined)) {
      const stored = await this.threads.stored(subscriber.instanceId, subscriber.roomId, id);
      if (!stored || !shownTo(stored, subscriber.userId)) return;
    }
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    subscriber.channel.push({ id: String(subscriber.lastId), body: chatkitEvent('reply_deleted', { message_id: id, parent_id }, timestamp) });
  }

  /** `reply_added` (asked for with `threads`): the reply as the subscriber's API version shows it, and its parent's id. */
  private pushReply(event: RecordedEvent<MessageSent>, subscriber: RoomSubscriber): void {
    if (!subscriber.parleyEvents.has('threads')) return;
    const { version, channel } = subscriber;
    const reply = presentMessage(version, { ...messageDocumentFrom(event), parent_id: event.data.parent_id }, this.attachments);
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    channel.push({ id: String(subscriber.lastId), body: chatkitEvent('reply_added', { parent_id: event.data.parent_id, message: reply }, timestamp) });
  }

  /** A live message as the subscriber's API version shows it: built for the first subscriber, shared by the rest. */
  private liveMessage(event: RecordedEvent<MessageSent>, subscriber: RoomSubscriber): LiveMessage {
    let byVersion = this.rendered.get(event);
    if (!byVersion) this.rendered.set(event, (byVersion = {}));
    const { version } = subscriber;
    let live = byVersion[version];
    if (!live) {
      const doc = messageDocumentFrom(event);
      const timestamp = event.metadata.occurred_at ?? event.recordedAt;
      const body = chatkitEvent('new_message', presentMessage(version, doc, this.attachments), timestamp);
      live = { doc, wire: { id: String(doc.id), body, shared: true } };
      byVersion[version] = live;
    }
    return live;
  }
}

/** Notes a message as sent to the subscriber: its id for the replay check, the message itself for v2 tombstones. */
function sentTo(subscriber: RoomSubscriber, doc: MessageDocument): void {
  if (doc.id > subscriber.lastId) subscriber.lastId = doc.id;
  const recent = subscriber.recent;
  if (!recent) return;
  recent.set(doc.id, doc);
  if (recent.size > RECENT_MESSAGES) recent.delete(recent.keys().next().value as number);
}

export const parseMessageLimit = (raw: string | null): number => {
  if (raw === null || raw === '') return DEFAULT_MESSAGE_LIMIT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_MESSAGE_LIMIT) {
    throw unprocessable('invalid_message_limit', `message_limit must be a whole number from 0 to ${MAX_MESSAGE_LIMIT}`);
  }
  return n;
};
