import { LogPosition, RecordedEvent } from '../../shared/domain/event';
import { streamName } from '../../shared/domain/streams';
import { EventStore } from '../../shared/ports/event-store.port';
import { ReadModelStore } from '../../shared/ports/read-model-store.port';
import { actorKey, AUDIT_INDEX, AuditIndexDocument, auditIndexProjection, roomKey } from '../../../projections/audit/audit-index.projection';
import { checkpointName } from '../../../projections/projection';
import { instanceStream } from '../instances/domain/instance.decider';
import { roomStream } from '../rooms/domain/room.decider';
import { userStream } from '../users/domain/user.decider';
import { rolesStream } from '../roles/domain/roles.decider';
import { userRolesStream } from '../roles/domain/user-roles.decider';
import { beamsPublishStream, beamsUserStream } from '../beams/domain/beams.deciders';
import { messagesStream } from '../messages/domain/message.decider';

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
/** Streams read at once when a room has many messages. */
const PARALLEL_READS = 16;

const byPosition = (a: RecordedEvent, b: RecordedEvent) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0);

/**
 * The audit trail of an entity, read from the log: every stream the entity has, merged in log
 * order. A user: its own stream, its role grants and its Beams deletions. A room: its stream,
 * its timeline (sends), its messages' edits and deletions, its attachments' streams and the
 * role grants scoped to it (the last three found through the audit index).
 * An actor: what the audit index lists under it. One reader for the CLI and the HTTP API.
 */
export class EntityHistory {
  constructor(
    private readonly events: EventStore,
    /** Queries' view of the read models (the serving version of the audit index). */
    private readonly readModels: ReadModelStore,
  ) {}

  async page(subject: AuditSubject, request: AuditPageRequest): Promise<AuditPage> {
    if (subject.kind === 'actor') return this.actorPage(subject.instanceId, actorIndexKey(subject.id), request);
    const { events, streams } = await this.history(subject);
    const after = request.from ? events.filter((e) => e.position > request.from!) : events;
    const page = after.slice(0, request.limit);
    return { events: page, next: after.length > page.length ? page[page.length - 1].position : null, sources: streams };
  }

  /** An entity's whole history, oldest first. */
  async history(subject: EntitySubject): Promise<{ events: RecordedEvent[]; streams: string[] }> {
    const { instanceId } = subject;
    switch (subject.kind) {
      case 'instance':
        return this.merged([instanceStream(instanceId)]);
      case 'roles':
        return this.merged([rolesStream(instanceId)]);
      case 'publish':
        return this.merged([beamsPublishStream(instanceId, subject.id)]);
      case 'user':
        return this.merged([userStream(instanceId, subject.id), userRolesStream(instanceId, subject.id), beamsUserStream(instanceId, subject.id)]);
      case 'room':
        return this.room(instanceId, subject.id);
    }
  }

  private async room(instanceId: string, roomId: string): Promise<{ events: RecordedEvent[]; streams: string[] }> {
    const own = await this.merged([roomStream(instanceId, roomId), messagesStream(instanceId, roomId)]);
    // Found through the index, not by reading every message's stream: edits and deletions
    // name their room. (Logs from before messages had streams keep them in the timeline.)
    const linked = await this.indexed(instanceId, roomKey(roomId), { limit: Number.MAX_SAFE_INTEGER });
    // An attachment's later events do not name the room: its whole stream belongs to the room.
    const attachmentStreams = [...new Set(linked.filter((d) => d.type === 'AttachmentCreated').map((d) => d.stream))];
    const attachments = await this.merged(attachmentStreams);
    const pointed = linked.filter((d) => d.type !== 'AttachmentCreated');
    const single = await this.at(pointed);
    const seen = new Set<string>();
    const events = [...own.events, ...attachments.events, ...single]
      .filter((e) => !seen.has(e.id) && seen.add(e.id))
      .sort(byPosition);
    const streams = [
      ...own.streams,
      ...(pointed.some((d) => d.type.startsWith('Message')) ? [streamName('message', instanceId, '<message id>')] : []),
      ...attachmentStreams,
      ...(pointed.some((d) => d.type.startsWith('UserRole')) ? [userRolesStream(instanceId, '<user id>')] : []),
    ];
    return { events, streams };
  }

  private async actorPage(instanceId: string, key: string, request: AuditPageRequest): Promise<AuditPage> {
    const docs = await this.indexed(instanceId, key, { from: request.from, limit: request.limit + 1 });
    const page = docs.slice(0, request.limit);
    return { events: await this.at(page), next: docs.length > page.length ? page[page.length - 1].position : null, sources: [AUDIT_INDEX] };
  }

  private indexed(instanceId: string, key: string, request: { from?: LogPosition | null; limit: number }): Promise<AuditIndexDocument[]> {
    return this.readModels.find<AuditIndexDocument>(AUDIT_INDEX, {
      where: { instance_id: instanceId, key, ...(request.from && { position: { gt: request.from } }) },
      sort: [{ field: 'position' }],
      limit: request.limit,
    });
  }

  /** The events the index points at, in its order. */
  private async at(docs: readonly AuditIndexDocument[]): Promise<RecordedEvent[]> {
    const found = await inBatches(docs, (d) => this.events.readStream(d.stream, { fromRevision: d.revision, maxCount: 1 }));
    return found.map(([event]) => event).filter((e): e is RecordedEvent => e !== undefined);
  }

  private async merged(streams: readonly string[]): Promise<{ events: RecordedEvent[]; streams: string[] }> {
    const all = await inBatches(streams, (s) => this.wholeStream(s));
    return { events: all.flat().sort(byPosition), streams: [...streams] };
  }

  /** Every event of the stream, oldest first, a page at a time. */
  private async wholeStream(stream: string): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for (let from = 0; ; ) {
      const page = await this.events.readStream(stream, { fromRevision: from, maxCount: STREAM_PAGE });
      events.push(...page);
      if (page.length < STREAM_PAGE) return events;
      from = page[page.length - 1].revision + 1;
    }
  }
}

async function inBatches<T, R>(items: readonly T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += PARALLEL_READS) results.push(...(await Promise.all(items.slice(i, i + PARALLEL_READS).map(read))));
  return results;
}
