import { Inject, Injectable } from '@nestjs/common';
import { notFound, unprocessable } from '../../shared/domain/errors';
import { RecordedEvent } from '../../shared/domain/event';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { caughtUpWithLog } from '../../shared/application/write-path/caught-up-with-log';
import { readAfterWrites } from '../../shared/application/write-path/read-after-writes';
import { MESSAGE_READS } from '../messages/messages.read-model';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { parseLimit } from '../../shared/http/query-params';
import { AUDIT_INDEX_CHECKPOINT, AuditPageRequest, AuditSubject, EntityHistory } from './entity-history';
import { MessageHistory } from './message-history';

/** One event as the audit shows it (the CLI's --json lines too). Secrets stay sealed, as logged. */
export interface AuditEventView {
  readonly stream: string;
  readonly revision: number;
  readonly position: string;
  readonly id: string;
  readonly type: string;
  readonly recorded_at: string;
  readonly actor: unknown;
  readonly request_id: unknown;
  readonly data: unknown;
}

export const presentAuditEvent = (event: RecordedEvent): AuditEventView => ({
  stream: event.streamName,
  revision: event.revision,
  position: event.position,
  id: event.id,
  type: event.type,
  recorded_at: event.recordedAt,
  actor: event.metadata?.actor ?? null,
  request_id: event.metadata?.request_id ?? null,
  data: event.data,
});

export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;

/** `from` (a log position from a previous page's `next`: digits, and `:` in EventStoreDB's) and `limit` (1 to 1000, default 100). */
export const parseAuditPage = (query: Record<string, unknown>): AuditPageRequest => {
  const from = query.from;
  if (from !== undefined && (typeof from !== 'string' || !/^[0-9:]{0,64}$/.test(from))) {
    throw unprocessable('invalid_from', 'from must be a log position, as given in a previous page\'s "next"');
  }
  return { from: from || null, limit: parseLimit(query.limit, { fallback: AUDIT_PAGE_DEFAULT, max: AUDIT_PAGE_MAX }) };
};

/** The audit views over HTTP: a page of events, after the audit index has caught up with the log. */
@Injectable()
export class AuditTrail {
  private readonly history: EntityHistory;
  private readonly messages: MessageHistory;

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_MODEL_STORE) readModels: ReadModelStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {
    this.history = new EntityHistory(events, readModels);
    this.messages = new MessageHistory(events, readModels);
  }

  async page(subject: AuditSubject, request: AuditPageRequest): Promise<{ events: AuditEventView[]; next: string | null }> {
    if (subject.kind === 'actor' || subject.kind === 'room') await this.indexCaughtUp();
    const page = await this.history.page(subject, request);
    if (page.events.length === 0 && !request.from) {
      const id = 'id' in subject ? subject.id : subject.instanceId;
      throw notFound(`${subject.kind}_not_found`, `The ${subject.kind} "${id}" has no history in this instance`);
    }
    return { events: page.events.map(presentAuditEvent), next: page.next };
  }

  /** A message's history (MessageHistory); 404 when nothing in the log names the message. */
  async messagePage(instanceId: string, messageId: number, request: AuditPageRequest & { roomId?: string }): Promise<{ events: AuditEventView[]; next: string | null }> {
    // It finds the message's room in the messages read model, which a send leaves to its readers.
    await readAfterWrites(this.readYourWrites, MESSAGE_READS);
    const page = await this.messages.page(instanceId, messageId, request);
    if (!page) throw notFound('message_not_found', `The message ${messageId} has no history in this instance`);
    return { events: page.events.map(presentAuditEvent), next: page.next };
  }

  /** Everything appended before the request is in the index (the views read it). */
  private indexCaughtUp(): Promise<void> {
    return caughtUpWithLog(this.events, this.readYourWrites, [AUDIT_INDEX_CHECKPOINT], { reason: 'audit_index_lag', what: 'The audit index' });
  }
}
