import { LogPosition, RecordedEvent } from '../../shared/domain/event';
import { streamName } from '../../shared/domain/streams';
import { EventStore } from '../../shared/ports/event-store.port';
import { Condition, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { firstEventAfterPosition, StreamReader } from '../../shared/application/write-path/stream-position-search';
import { actorKey, AUDIT_INDEX, AuditIndexDocument, auditIndexProjection, roomKey } from '../../../projections/audit/audit-index.projection';
import { checkpointName } from '../../../projections/projection';
import { instanceStream } from '../instances/domain/instance.decider';
import { roomStream } from '../rooms/domain/room.decider';
import { userStream } from '../users/domain/user.decider';
import { rolesStream } from '../roles/domain/roles.decider';
import { userRolesStream } from '../roles/domain/user-roles.decider';
import { beamsPublishStream, beamsUserStream } from '../beams/domain/beams.deciders';
import { messagesStream } from '../messages/domain/message.decider';
import { mutesStream } from '../mutes/domain/mutes.decider';
import { reportsStream } from '../reports/domain/reports.decider';
import { roomRestrictionsStream } from '../bans/domain/restrictions.decider';

/** What the audit can show: one entity's history, or everything one actor did. */
export type EntitySubject =
  | { readonly kind: 'user' | 'room' | 'publish'; readonly instanceId: string; readonly id: string }
  | { readonly kind: 'roles' | 'instance'; readonly instanceId: string };
/** `id`: a user id, `key:<key_id>`, or `user:<user_id>`. */
export type ActorSubject = { readonly kind: 'actor'; readonly instanceId: string; readonly id: string };
export type AuditSubject = EntitySubject | ActorSubject;

export interface AuditPageRequest {
  /** Exclusive: events after this log position. */
  readonly from?: LogPosition | null;
  readonly limit: number;
}

export interface AuditPage {
  /** Oldest first, in log order. */
  readonly events: readonly RecordedEvent[];
  /** Where the next page starts (its `from`), or null when this page is the last. */
  readonly next: LogPosition | null;
  /** The streams read (for an actor: the index's name). */
  readonly sources: readonly string[];
}

/** The checkpoint of the audit index: what the actor and room views wait for. */
export const AUDIT_INDEX_CHECKPOINT = checkpointName(auditIndexProjection);

/** `<user_id>`, `key:<key_id>`, or `user:<user_id>` (for a user id that itself starts with `key:`). */
export const actorIndexKey = (actor: string): string => {
  if (actor.startsWith('key:')) return actorKey.key(actor.slice('key:'.length));
  if (actor.startsWith('user:')) return actorKey.user(actor.slice('user:'.length));
  return actorKey.user(actor);
};

const STREAM_PAGE = 500;
/** Streams read at once when a room has many attachments. */
const PARALLEL_READS = 16;

/** A page and one more: whether a next page exists (the CLI's whole history asks for the largest limit). */
const pageAndOne = (request: AuditPageRequest) => Math.min(request.limit + 1, Number.MAX_SAFE_INTEGER);

const byPosition = (a: RecordedEvent, b: RecordedEvent) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0);

/** An entity's sources for one page: its streams, each read from the page's start, and events the index points at. */
interface PageSources {
  readonly streams: readonly string[];
  readonly pointed: readonly AuditIndexDocument[];
  /** The names the page lists as read. */
  readonly named: readonly string[];
}

/**
 * The audit trail of an entity, read from the log: every stream the entity has, merged in log
 * order. A user: its own stream, its role grants, its Beams deletions, its mutes and the reports it filed. A room: its stream,
 * its timeline (sends), its messages' edits and deletions, its attachments' streams and the
 * role grants scoped to it (the last three found through the audit index).
 * An actor: what the audit index lists under it. One reader for the CLI and the HTTP API.
 *
 * A page costs the page, not the history: each stream is entered at the page's start by a
 * binary search over its revisions and read for at most `limit + 1` events, the index is read
 * from the same position for as many, and the merge is cut to `limit`.
 */
export class EntityHistory {
  constructor(
    private readonly events: EventStore,
    /** Queries' view of the read models (the serving version of the audit index). */
    private readonly readModels: ReadModelStore,
  ) {}

  async page(subject: AuditSubject, request: AuditPageRequest): Promise<AuditPage> {
    if (subject.kind === 'actor') return this.actorPage(subject.instanceId, actorIndexKey(subject.id), request);
    const sources = await this.sources(subject, request);
    // Any source's first `limit + 1` events after `from` cover the merge's first `limit + 1`.
    const read = await inBatches(sources.streams, (stream) => this.streamAfter(stream, request.from ?? null, pageAndOne(request)));
    const seen = new Set<string>();
    const after = [...read.flat(), ...(await this.at(sources.pointed))]
      .filter((e) => !seen.has(e.id) && seen.add(e.id))
      .sort(byPosition);
    const page = after.slice(0, request.limit);
    return { events: page, next: after.length > page.length ? page[page.length - 1].position : null, sources: sources.named };
  }

  private async sources(subject: EntitySubject, request: AuditPageRequest): Promise<PageSources> {
    const { instanceId } = subject;
    const only = (...streams: string[]): PageSources => ({ streams, pointed: [], named: streams });
    switch (subject.kind) {
      case 'instance':
        return only(instanceStream(instanceId));
      case 'roles':
        return only(rolesStream(instanceId));
      case 'publish':
        return only(beamsPublishStream(instanceId, subject.id));
      case 'user':
        return only(
          userStream(instanceId, subject.id),
          userRolesStream(instanceId, subject.id),
          beamsUserStream(instanceId, subject.id),
          mutesStream(instanceId, subject.id),
          reportsStream(instanceId, subject.id),
        );
      case 'room':
        return this.roomSources(instanceId, subject.id, request);
    }
  }

  private async roomSources(instanceId: string, roomId: string, request: AuditPageRequest): Promise<PageSources> {
    const key = roomKey(roomId);
    const own = [roomStream(instanceId, roomId), messagesStream(instanceId, roomId)];
    // An attachment's later events do not name the room: its whole stream belongs to the room,
    // however early it was created (one index line per attachment, not per send).
    const created = await this.indexed(instanceId, key, { type: 'AttachmentCreated', limit: Number.MAX_SAFE_INTEGER });
    const attachmentStreams = [...new Set(created.map((d) => d.stream))];
    // Edits, deletions, reactions, pins and role grants name their room: the index lists them in log order, so
    // the page needs its first `limit + 1` after `from` (found through the index, not by reading
    // every message's stream; logs from before messages had streams keep them in the timeline).
    const pointed = await this.indexed(instanceId, key, { from: request.from, limit: pageAndOne(request) });
    const [messages, pins, grants, restrictions] = await Promise.all([
      this.indexed(instanceId, key, { type: { in: ['MessageEdited', 'MessageDeleted', 'MessageReactionAdded', 'MessageReactionRemoved'] }, limit: 1 }),
      this.indexed(instanceId, key, { type: { in: ['MessagePinned', 'MessageUnpinned'] }, limit: 1 }),
      this.indexed(instanceId, key, { type: { in: ['UserRoleAssigned', 'UserRoleRemoved'] }, limit: 1 }),
      this.indexed(instanceId, key, { type: { in: ['UserBanned', 'UserUnbanned', 'RoomFrozen', 'RoomUnfrozen'] }, limit: 1 }),
    ]);
    const named = [
      ...own,
      ...(messages.length > 0 ? [streamName('message', instanceId, '<message id>')] : []),
      ...(pins.length > 0 ? [streamName('pins', instanceId, roomId)] : []),
      ...(restrictions.length > 0 ? [roomRestrictionsStream(instanceId, roomId)] : []),
      ...attachmentStreams,
      ...(grants.length > 0 ? [userRolesStream(instanceId, '<user id>')] : []),
    ];
    return { streams: [...own, ...attachmentStreams], pointed, named };
  }

  private async actorPage(instanceId: string, key: string, request: AuditPageRequest): Promise<AuditPage> {
    const docs = await this.indexed(instanceId, key, { from: request.from, limit: pageAndOne(request) });
    const page = docs.slice(0, request.limit);
    return { events: await this.at(page), next: docs.length > page.length ? page[page.length - 1].position : null, sources: [AUDIT_INDEX] };
  }

  private indexed(
    instanceId: string,
    key: string,
    request: { from?: LogPosition | null; type?: Condition; limit: number },
  ): Promise<AuditIndexDocument[]> {
    return this.readModels.find<AuditIndexDocument>(AUDIT_INDEX, {
      where: {
        instance_id: instanceId,
        key,
        ...(request.from && { position: { gt: request.from } }),
        ...(request.type !== undefined && { type: request.type }),
      },
      sort: [{ field: 'position' }],
      limit: request.limit,
    });
  }

  /** The events the index points at, in its order. */
  private async at(docs: readonly AuditIndexDocument[]): Promise<RecordedEvent[]> {
    const found = await inBatches(docs, (d) => this.events.readStream(d.stream, { fromRevision: d.revision, maxCount: 1 }));
    return found.map(([event]) => event).filter((e): e is RecordedEvent => e !== undefined);
  }

  /** At most `count` events of the stream after the position `from` (null: from its start), oldest first. */
  private async streamAfter(stream: string, from: LogPosition | null, count: number): Promise<RecordedEvent[]> {
    const read: StreamReader = (s, options) => this.events.readStream(s, options);
    const first = from === null ? 0 : (await firstEventAfterPosition(read, stream, from))?.revision;
    if (first === undefined) return [];
    const events: RecordedEvent[] = [];
    for (let at = first; events.length < count; ) {
      const wanted = Math.min(STREAM_PAGE, count - events.length);
      const page = await this.events.readStream(stream, { fromRevision: at, maxCount: wanted });
      events.push(...page);
      if (page.length < wanted) break; // the stream ends here
      at = page[page.length - 1].revision + 1;
    }
    return events;
  }
}

async function inBatches<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += PARALLEL_READS) results.push(...(await Promise.all(items.slice(i, i + PARALLEL_READS).map(read))));
  return results;
}
