import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { DomainError, unprocessable } from '../../shared/domain/errors';
import { parseLimit } from '../../shared/http/query-params';
import { MessageDocument } from '../../../projections/messages/messages.projection';
import { PinDocument, PINS } from '../../../projections/pins/pins.projection';
import { REACTION_SUMMARIES, ReactionSummaryDocument } from '../../../projections/reactions/reactions.projection';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { auditActor } from '../instances/authentication/access-token.guard';
import { RequestActor } from '../instances/authentication/access-token';
import { currentPart, MessagePart } from '../messages/domain/message-parts';
import { MODERATOR } from '../messages/domain/message-visibility';
import { summariesShownTo, ThreadsReadModel, ThreadSummary } from '../threads/threads.read-model';
import { contentReadDecider, contentReadStream } from './domain/content-read.decider';

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

/**
 * What the console shows beside a message: its reactions (how many; their types are content),
 * its pin (ids and times) and, on a thread's first message, its thread's summary (a count, a
 * time and user ids: metadata, shown without a content read).
 */
interface MessageExtras {
  readonly reactions?: ReactionSummaryDocument;
  readonly pin?: PinDocument;
  readonly thread?: ThreadSummary;
}

/**
 * A message as the console lists it; a deleted one (a tombstone) shows no parts, its content
 * being gone. `reaction_count` always, the counts per type (`reactions`) only with the content:
 * a reaction's type is sealed as content is. `shadow`: sent under a shadow ban, shown to its
 * sender alone (and to the moderators reading the console, who must judge it).
 */
const present = (doc: MessageDocument & { also_in_room?: true }, withContent: boolean, { reactions, pin, thread }: MessageExtras = {}) => {
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
    ...(doc.parent_id !== undefined && { parent_id: doc.parent_id }),
    ...(doc.also_in_room && { also_in_room: true }),
    ...(doc.shadow && { shadow: true }),
    ...(counts && { reaction_count: Object.values(counts).reduce((sum, n) => sum + n, 0) }),
    ...(counts && withContent && { reactions: counts }),
    ...(pin && !deleted && { pinned: { ...(pin.pinned_by !== undefined && { by: pin.pinned_by }), at: pin.pinned_at, ...(pin.until !== undefined && { until: pin.until }) } }),
    // A thread outlives its first message's deletion (its replies are their senders'): its summary shows on the tombstone too.
    ...(thread && { thread }),
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

/** A console page's query, checked: `limit`, `before` or `after` (a message id), `content`. */
export interface ConsolePageQuery {
  readonly limit: number;
  /** Where the page starts (exclusive) and which way it goes: `before` newest first, `after` oldest first. */
  readonly initialId?: number;
  readonly direction: 'older' | 'newer';
  readonly withContent: boolean;
}

export function parseConsolePageQuery(query: Record<string, unknown>): ConsolePageQuery {
  const limit = parseLimit(query.limit, { fallback: MESSAGES_PAGE_DEFAULT, max: MESSAGES_PAGE_MAX });
  const before = messageId(query.before, 'before');
  const after = messageId(query.after, 'after');
  if (before !== undefined && after !== undefined) throw unprocessable('invalid_query', 'Give before or after, not both');
  if (query.content !== undefined && query.content !== 'true' && query.content !== 'false') {
    throw unprocessable('invalid_content', 'content must be true or false');
  }
  const newer = after !== undefined;
  return { limit, initialId: newer ? after : before, direction: newer ? 'newer' : 'older', withContent: query.content === 'true' };
}

/**
 * The console reads as the moderators it serves: what was sent under a shadow ban shows (marked
 * `shadow`), as it shows to its sender, so that they can judge it (docs/console.md).
 */
export const CONSOLE_VIEWER = MODERATOR;

/**
 * One page of messages as the console shows them, the room's or a thread's alike: metadata
 * unless content is asked for, and then that read recorded in the log (who, the room, which
 * messages, the thread; no content) before anything is answered: if it cannot be recorded,
 * nothing is shown. The messages come from read models where deletes and erasures left
 * tombstones, so what was deleted or erased is never shown.
 */
@Injectable()
export class ConsoleMessagePage {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly threads: ThreadsReadModel,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  /** `docs`: up to `limit + 1` messages in page order (one more says a next page exists); `parentId`: the thread they are replies in. */
  async answer(
    instanceId: string,
    roomId: string,
    docs: readonly MessageDocument[],
    query: ConsolePageQuery,
    actor: RequestActor,
    parentId?: number,
  ): Promise<{ messages: ReturnType<typeof present>[]; next?: number }> {
    const page = docs.slice(0, query.limit);
    if (query.withContent) await this.recordContentRead(instanceId, roomId, page, actor, parentId);
    const extras = await this.extras(instanceId, roomId, page, parentId === undefined);
    return {
      messages: page.map((doc) => present(doc, query.withContent, extras.get(doc.id))),
      ...(docs.length > query.limit && { next: page[page.length - 1].id }),
    };
  }

  private async recordContentRead(instanceId: string, roomId: string, page: readonly MessageDocument[], actor: RequestActor, parentId: number | undefined) {
    const now = this.clock.now().toISOString();
    try {
      await this.pipeline.run(
        contentReadStream(instanceId, roomId),
        contentReadDecider,
        { type: 'RecordContentRead', roomId, messageIds: page.map((m) => m.id), ...(parentId !== undefined && { parentId }), now },
        { instance_id: instanceId, actor: auditActor(actor), occurred_at: now },
        // The record must be durable before the content is answered; no read model shows it first.
        { awaitProjections: [] },
      );
    } catch (error) {
      throw Object.assign(contentReadNotRecorded(), { cause: error });
    }
  }

  /**
   * The page's reaction summaries, the room's standing pins (at most 50) and, on a room's page,
   * its threads' summaries (threads are one level deep: a thread's replies have none) as a
   * moderator sees them (replies sent under a shadow ban counted, and how many), by message id.
   */
  private async extras(instanceId: string, roomId: string, page: readonly MessageDocument[], withThreads: boolean): Promise<Map<number, MessageExtras>> {
    const found = new Map<number, MessageExtras>();
    if (page.length === 0) return found;
    const ids = page.map((m) => m.id);
    const [summaries, pins, threads] = await Promise.all([
      this.readModels.find<ReactionSummaryDocument>(REACTION_SUMMARIES, { where: { instance_id: instanceId, message_id: { in: ids } } }),
      this.readModels.find<PinDocument>(PINS, { where: { instance_id: instanceId, room_id: roomId, shown_until: { gt: this.clock.now().toISOString() } }, limit: 50 }),
      withThreads ? summariesShownTo(this.threads, instanceId, roomId, page, CONSOLE_VIEWER) : new Map<number, ThreadSummary>(),
    ]);
    const add = (id: number, extra: MessageExtras) => found.set(id, { ...found.get(id), ...extra });
    for (const summary of summaries) add(summary.message_id, { reactions: summary });
    for (const pin of pins) if (ids.includes(pin.message_id)) add(pin.message_id, { pin });
    for (const [id, thread] of threads) add(id, { thread });
    return found;
  }
}
