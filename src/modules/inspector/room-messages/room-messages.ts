import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { DomainError, unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { MessageDocument } from '../../../../projections/messages/messages.projection';
import { PinDocument, PINS } from '../../../../projections/pins/pins.projection';
import { REACTION_SUMMARIES, ReactionSummaryDocument } from '../../../../projections/reactions/reactions.projection';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { currentPart, MessagePart } from '../../messages/domain/message-parts';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { contentReadDecider, contentReadStream } from '../domain/content-read.decider';

export const MESSAGES_PAGE_DEFAULT = 50;
export const MESSAGES_PAGE_MAX = 100;

/** A part as the metadata view shows it: its type and size (the content's or link's UTF-8 bytes, an attachment's file size). */
const partMetadata = (part: MessagePart) => ({
  type: part.type,
  bytes: 'content' in part ? Buffer.byteLength(part.content) : 'url' in part ? Buffer.byteLength(part.url) : (part.attachment.size ?? 0),
});

/** A part with its content, in v6's shape (an attachment by id, name and size: no download link). */
const partContent = (stored: MessagePart) => {
  const part = currentPart(stored);
  if ('content' in part) return { type: part.type, content: part.content };
  if ('url' in part) return { type: part.type, url: part.url };
  const { id, name, size } = part.attachment;
  return { type: part.type, attachment: { id, ...(name !== undefined && { name }), ...(size !== undefined && { size }) } };
};

/** What the console shows beside a message: its reactions (how many; their types are content) and its pin (ids and times). */
interface MessageExtras {
  readonly reactions?: ReactionSummaryDocument;
  readonly pin?: PinDocument;
}

/**
 * A message as the console lists it; a deleted one (a tombstone) shows no parts, its content
 * being gone. `reaction_count` always, the counts per type (`reactions`) only with the content:
 * a reaction's type is sealed as content is.
 */
const present = (doc: MessageDocument, withContent: boolean, { reactions, pin }: MessageExtras = {}) => {
  const deleted = doc.deleted_at !== undefined;
  const counts = deleted ? undefined : reactions?.counts;
  return {
    id: doc.id,
    user_id: doc.user_id,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    deleted,
    ...(deleted && { deleted_at: doc.deleted_at }),
    parts: deleted ? [] : doc.parts.map((part): object => (withContent ? partContent(part) : partMetadata(part))),
    ...(counts && { reaction_count: Object.values(counts).reduce((sum, n) => sum + n, 0) }),
    ...(counts && withContent && { reactions: counts }),
    ...(pin && !deleted && { pinned: { ...(pin.pinned_by !== undefined && { by: pin.pinned_by }), at: pin.pinned_at, ...(pin.until !== undefined && { until: pin.until }) } }),
  };
};

const contentReadNotRecorded = () =>
  new DomainError('unavailable', 'content_read_not_recorded', 'The read could not be recorded in the event log, so no content is shown; it is safe to retry');

const messageId = (raw: unknown, name: string): number | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const id = typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 0) throw unprocessable(`invalid_${name}`, `${name} must be a message id (a whole number)`);
  return id;
};

/**
 * `GET rooms/:roomId/messages?limit=&before=&after=&content=`: a page of a room's messages for
 * the console, newest first (`before`: older than that id), or oldest first after an id
 * (`after`: what a live tail polls). Metadata only unless `content=true`, and that read is
 * recorded in the log (who, the room, which messages; no content) before anything is answered:
 * if it cannot be recorded, the request fails and shows nothing. Content comes from the
 * messages read model, where deletes and erasures left tombstones, so what was deleted or
 * erased is never shown. Messages deleted through v6 (no tombstone) are not listed; their
 * history is in the audit API.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class RoomMessagesController {
  constructor(
    private readonly rooms: RoomsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('rooms/:roomId/messages')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    const limit = parseLimit(query.limit, { fallback: MESSAGES_PAGE_DEFAULT, max: MESSAGES_PAGE_MAX });
    const before = messageId(query.before, 'before');
    const after = messageId(query.after, 'after');
    if (before !== undefined && after !== undefined) throw unprocessable('invalid_query', 'Give before or after, not both');
    if (query.content !== undefined && query.content !== 'true' && query.content !== 'false') {
      throw unprocessable('invalid_content', 'content must be true or false');
    }
    const withContent = query.content === 'true';
    await this.rooms.get(instanceId, roomId);

    const newer = after !== undefined;
    const docs = await this.messages.page(instanceId, roomId, { initialId: newer ? after : before, direction: newer ? 'newer' : 'older', limit: limit + 1 });
    const page = docs.slice(0, limit);
    if (withContent) {
      const now = this.clock.now().toISOString();
      const by = auditActor(actor);
      try {
        await this.pipeline.run(
          contentReadStream(instanceId, roomId),
          contentReadDecider,
          { type: 'RecordContentRead', roomId, messageIds: page.map((m) => m.id), now },
          { instance_id: instanceId, actor: by, occurred_at: now },
          // The record must be durable before the content is answered; no read model shows it first.
          { awaitProjections: [] },
        );
      } catch (error) {
        throw Object.assign(contentReadNotRecorded(), { cause: error });
      }
    }
    const extras = await this.extras(instanceId, roomId, page.map((m) => m.id));
    return {
      messages: page.map((doc) => present(doc, withContent, extras.get(doc.id))),
      ...(docs.length > limit && { next: page[page.length - 1].id }),
    };
  }

  /** The page's reaction summaries and the room's standing pins (at most 50), by message id. */
  private async extras(instanceId: string, roomId: string, ids: readonly number[]): Promise<Map<number, MessageExtras>> {
    const found = new Map<number, MessageExtras>();
    if (ids.length === 0) return found;
    const [summaries, pins] = await Promise.all([
      this.readModels.find<ReactionSummaryDocument>(REACTION_SUMMARIES, { where: { instance_id: instanceId, message_id: { in: [...ids] } } }),
      this.readModels.find<PinDocument>(PINS, { where: { instance_id: instanceId, room_id: roomId, shown_until: { gt: this.clock.now().toISOString() } }, limit: 50 }),
    ]);
    for (const summary of summaries) found.set(summary.message_id, { reactions: summary });
    for (const pin of pins) if (ids.includes(pin.message_id)) found.set(pin.message_id, { ...found.get(pin.message_id), pin });
    return found;
  }
}
