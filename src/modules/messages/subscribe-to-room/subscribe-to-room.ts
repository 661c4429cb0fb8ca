import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/read-your-writes';
import { unprocessable } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { ChatApiVersion, parseChatApiVersion } from '../../../shared/http/chatkit-route';
import { EPHEMERAL_BUS, EphemeralBus } from '../../../shared/ports/ephemeral-bus.port';
import { EventChannel } from '../../../shared/subscriptions/event-channel';
import { chatkitEvent, endForDeletedRoom } from '../../../shared/subscriptions/wire-event';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { MessageDocument, TOMBSTONE_TEXT } from '../../../../projections/messages/messages.projection';
import { roomStream } from '../../rooms/domain/room.decider';
import { RoomAccess } from '../../rooms/room-access';
import { typingChannel, TypingSignal } from '../../rooms/typing-channel';
import { SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { messagesStream } from '../domain/message.decider';
import { MessageDeleted, MessageSent } from '../domain/message.events';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../presentation/attachments.port';
import { presentMessage } from '../presentation/message.presenter';
import { MESSAGE_READS, MessagesReadModel } from '../messages.read-model';

export const DEFAULT_MESSAGE_LIMIT = 20;
export const MAX_MESSAGE_LIMIT = 100;

/**
 * `SUBSCRIBE /rooms/:roomId?message_limit=n` (v2 and v6): replays the newest messages oldest
 * first, or — resuming with `Last-Event-Id` — every message after that id, then goes live:
 * `new_message`, `message_deleted` (v6; v2 receives the DELETED tombstone as a `new_message`)
 * and `is_typing`. Event ids are message ids, so a client resumes where it left off.
 */
@Injectable()
export class RoomSubscription implements OnModuleInit {
  /** Live message events as already rendered per API version, shared by all subscribers. */
  private readonly rendered = new WeakMap<RecordedEvent, Map<ChatApiVersion, { body: unknown; bodyJson: string }>>();

  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly access: RoomAccess,
    private readonly messages: MessagesReadModel,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
  ) {}

  onModuleInit(): void {
    this.routes.register('/services/chatkit/:version/:instanceId/rooms/:roomId', (context, channel) =>
      this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const version = parseChatApiVersion(context.params.version);
    const { instanceId, roomId } = context.params;
    const limit = parseMessageLimit(context.query.get('message_limit'));
    const resumeAfter = parseLastEventId(context.lastEventId);
    await this.access.readable(instanceId, roomId, context.actor);

    let lastId = resumeAfter ?? 0;
    const sent = new Map<number, MessageDocument>(); // recent messages, for v2 tombstones
    const remember = (doc: MessageDocument) => {
      sent.set(doc.id, doc);
      if (sent.size > 1000) sent.delete(sent.keys().next().value as number);
    };
    const emit = (doc: MessageDocument, timestamp: string, shared?: RecordedEvent) => {
      lastId = Math.max(lastId, doc.id);
      remember(doc);
      const render = () => chatkitEvent('new_message', presentMessage(version, doc, this.attachments), timestamp);
      if (!shared) {
        channel.push({ id: String(doc.id), body: render() });
        return;
      }
      // A live message looks the same to every subscriber of a version: build and serialise it once.
      let byVersion = this.rendered.get(shared);
      if (!byVersion) this.rendered.set(shared, (byVersion = new Map()));
      let wire = byVersion.get(version);
      if (!wire) {
        const body = render();
        byVersion.set(version, (wire = { body, bodyJson: JSON.stringify(body) }));
      }
      channel.push({ id: String(doc.id), ...wire });
    };

    const offTyping = this.bus.subscribe(typingChannel(instanceId, roomId), (signal) => {
      const { user_id } = signal as TypingSignal;
      channel.push({ id: String(lastId), body: chatkitEvent('is_typing', { user_id }, new Date().toISOString()) });
    });
    channel.onClose(offTyping);

    await openCatchUpThenLive({
      liveLog: this.liveLog,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'chatkit',
      keys: [messagesStream(instanceId, roomId), roomStream(instanceId, roomId)],
      projections: MESSAGE_READS,
      readInitial: async () => {
        if (resumeAfter !== undefined) {
          for (let after = resumeAfter; ; ) {
            const page = await this.messages.after(instanceId, roomId, after, 500);
            for (const doc of page) emit(doc, doc.created_at);
            if (page.length < 500) break;
            after = page[page.length - 1].id;
          }
        } else if (limit > 0) {
          for (const doc of await this.messages.latest(instanceId, roomId, limit)) emit(doc, doc.created_at);
        }
      },
      deliver: (event) => this.deliverLive(event, version, instanceId, roomId, channel, emit, () => lastId, sent),
    });
  }

  /** Delivers one live event; returns a promise only when it must read first (v2 tombstones). */
  private deliverLive(
    event: RecordedEvent,
    version: ChatApiVersion,
    instanceId: string,
    roomId: string,
    channel: EventChannel,
    emit: (doc: MessageDocument, timestamp: string, shared?: RecordedEvent) => void,
    lastId: () => number,
    sent: Map<number, MessageDocument>,
  ): Promise<void> | void {
    const timestamp = event.metadata.occurred_at ?? event.recordedAt;
    switch (event.type) {
      case 'MessageSent': {
        const data = (event as RecordedEvent<MessageSent>).data;
        if (data.id <= lastId()) return; // already replayed
        emit(
          {
            _id: '',
            instance_id: instanceId,
            room_id: roomId,
            id: data.id,
            user_id: data.user_id,
            parts: data.parts as unknown as Record<string, unknown>[],
            created_at: data.created_at,
            updated_at: data.created_at,
            visible: true,
          },
          timestamp,
          event,
        );
        return;
      }
      case 'MessageDeleted': {
        const { id, deleted_at } = (event as RecordedEvent<MessageDeleted>).data;
        if (version === 6) {
          channel.push({ id: String(lastId()), body: chatkitEvent('message_deleted', { message_id: id }, timestamp) });
          return;
        }
        // v2 subscribers receive the tombstone (seed: text DELETED), never the content.
        const pushTombstone = (original?: MessageDocument) => {
          const tombstone = {
            id,
            ...(original && { user_id: original.user_id }),
            room_id: roomId,
            text: TOMBSTONE_TEXT,
            ...(original && { created_at: original.created_at }),
            updated_at: deleted_at,
            deleted_at,
          };
          channel.push({ id: String(lastId()), body: chatkitEvent('new_message', tombstone, timestamp) });
        };
        const known = sent.get(id);
        if (known) return pushTombstone(known);
        return this.messages.get(instanceId, roomId, id).then((doc) => pushTombstone(doc ?? undefined));
      }
      case 'RoomDeleted':
        endForDeletedRoom(channel, roomId);
        return;
      default:
        return;
    }
  }
}

export const parseMessageLimit = (raw: string | null): number => {
  if (raw === null || raw === '') return DEFAULT_MESSAGE_LIMIT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_MESSAGE_LIMIT) {
    throw unprocessable('invalid_message_limit', `message_limit must be a whole number from 0 to ${MAX_MESSAGE_LIMIT}`);
  }
  return n;
};

/** Resuming clients send the id of the last event they saw: a message id. Anything else replays as new. */
const parseLastEventId = (raw: string | undefined): number | undefined => {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
};
