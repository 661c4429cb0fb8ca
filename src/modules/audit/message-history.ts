import { LogPosition, positionAfter, RecordedEvent } from '../../shared/domain/event';
import { EventStore } from '../../shared/ports/event-store.port';
import { ReadModelStore } from '../../shared/ports/read-model-store.port';
import { firstEventAfterPosition, firstEventReaching, StreamReader } from '../../shared/application/write-path/stream-position-search';
import { MESSAGES, MessageDocument } from '../../../projections/messages/messages.projection';
import { THREAD_REPLIES } from '../../../projections/threads/threads.projection';
import { contentReadStream } from '../inspector/domain/content-read.decider';
import { messagesStream, messageStream } from '../messages/domain/message.decider';
import { AuditPage, AuditPageRequest } from './entity-history';

/** Content reads read per page at most: a page ends early (with `next`) past that many that did not show the message. */
export const CONTENT_READS_SCANNED = 2_000;
const STREAM_PAGE = 500;

const byPosition = (a: RecordedEvent, b: RecordedEvent) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0);

/** Whether a recorded content read (`MessageContentRead`) showed the message: its id is within the read's range. */
const showed = (event: RecordedEvent, messageId: number): boolean => {
  const data = event.data as { first_message_id?: unknown; last_message_id?: unknown };
  return (
    event.type === 'MessageContentRead' &&
    typeof data.first_message_id === 'number' &&
    typeof data.last_message_id === 'number' &&
    data.first_message_id <= messageId &&
    messageId <= data.last_message_id
  );
};

/**
 * One message's history, read from the log: its send (found in its room's timeline by a binary
 * search over revisions, as ids grow along a timeline), its edits and deletion (its own stream),
 * and the console's recorded reads of its content (its room's content-read stream, read from the
 * send on). The room is the one the message's own stream or the read models (the room's
 * messages, a thread's replies) name, or
 * `roomId` when the caller gives it (a deleted room's messages are in no read model).
 *
 * A page costs the page: the send is about log2(timeline length) single-event reads, the own
 * stream is read for `limit + 1` events after `from`, and the content reads for at most
 * `CONTENT_READS_SCANNED` events; a page that stopped there ends at the last one read, with
 * `next`, and may hold fewer than `limit` events.
 */
export class MessageHistory {
  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
  ) {}

  /** null: no such message in this instance (nothing in the log names it). */
  async page(instanceId: string, messageId: number, request: AuditPageRequest & { readonly roomId?: string }): Promise<AuditPage | null> {
    const read: StreamReader = (stream, options) => this.events.readStream(stream, options);
    const own = messageStream(instanceId, messageId);
    const [firstChange] = await this.events.readStream(own, { maxCount: 1 });
    const roomId = request.roomId ?? (firstChange?.data as { room_id?: string } | undefined)?.room_id ?? (await this.roomOf(instanceId, messageId));
    const sent = roomId === undefined ? null : await this.sendOf(read, messagesStream(instanceId, roomId), messageId);
    if (!sent && !firstChange) return null;

    const from = request.from ?? null;
    const wanted = request.limit + 1;
    const changes = await this.after(read, own, from, wanted);
    const candidates = [...(sent && positionAfter(sent.position, from) ? [sent] : []), ...changes];
    let boundary: LogPosition | null = null;
    const sources = [...(roomId !== undefined ? [messagesStream(instanceId, roomId)] : []), own];
    if (roomId !== undefined && sent) {
      const reads = contentReadStream(instanceId, roomId);
      sources.push(reads);
      // No read showed the message before it was sent.
      const start = from !== null && positionAfter(from, sent.position) ? from : sent.position;
      const scan = await this.readsShowing(read, reads, start, messageId, wanted);
      candidates.push(...scan.found);
      boundary = scan.stoppedAt;
    }
    const inOrder = candidates.sort(byPosition).filter((e) => boundary === null || !positionAfter(e.position, boundary));
    const page = inOrder.slice(0, request.limit);
    const next = inOrder.length > page.length ? page[page.length - 1].position : boundary;
    return { events: page, next, sources };
  }

  /**
   * The room of the message as the read models hold it (deleted ones too: any visibility): the
   * room's messages, else the thread replies (a reply shown in its thread alone is in no room's
   * messages). Each is found on its collection's (instance_id, id) index.
   */
  private async roomOf(instanceId: string, messageId: number): Promise<string | undefined> {
    for (const collection of [MESSAGES, THREAD_REPLIES]) {
      const [doc] = await this.readModels.find<MessageDocument>(collection, { where: { instance_id: instanceId, id: messageId }, limit: 1 });
      if (doc) return doc.room_id;
    }
    return undefined;
  }

  /** The message's `MessageSent` in the timeline (other events there, from older logs, are stepped over). */
  private async sendOf(read: StreamReader, timeline: string, messageId: number): Promise<RecordedEvent | null> {
    const [newest] = await read(timeline, { direction: 'backwards', maxCount: 1 });
    if (!newest) return null;
    const idOf = (event: RecordedEvent) => (event.data as { id: number }).id;
    const found = await firstEventReaching(read, timeline, newest.revision, (event) => (event.type === 'MessageSent' ? idOf(event) >= messageId : null));
    return found && idOf(found) === messageId ? found : null;
  }

  /** At most `count` events of a stream after the position `from` (null: from its start). */
  private async after(read: StreamReader, stream: string, from: LogPosition | null, count: number): Promise<RecordedEvent[]> {
    const first = from === null ? 0 : (await firstEventAfterPosition(read, stream, from))?.revision;
    if (first === undefined) return [];
    return read(stream, { fromRevision: first, maxCount: count });
  }

  /**
   * The content reads after `from` that showed the message, up to `count` of them; `stoppedAt`:
   * the position of the last read looked at when the scan stopped at its cap (null: it saw
   * every read up to the `count`th match, or the stream's end).
   */
  private async readsShowing(
    read: StreamReader,
    stream: string,
    from: LogPosition,
    messageId: number,
    count: number,
  ): Promise<{ found: RecordedEvent[]; stoppedAt: LogPosition | null }> {
    const found: RecordedEvent[] = [];
    const first = await firstEventAfterPosition(read, stream, from);
    if (!first) return { found, stoppedAt: null };
    for (let at = first.revision, scanned = 0; ; ) {
      const batch = await read(stream, { fromRevision: at, maxCount: STREAM_PAGE });
      scanned += batch.length;
      for (const event of batch) {
        if (showed(event, messageId)) found.push(event);
        if (found.length === count) return { found, stoppedAt: null };
      }
      if (batch.length < STREAM_PAGE) return { found, stoppedAt: null };
      if (scanned >= CONTENT_READS_SCANNED) return { found, stoppedAt: batch[batch.length - 1].position };
      at = batch[batch.length - 1].revision + 1;
    }
  }
}
