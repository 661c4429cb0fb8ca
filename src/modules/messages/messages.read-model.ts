import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { readAfterWrites } from '../../shared/application/write-path/read-after-writes';
import { MESSAGES, MessageDocument, messageDocumentId, messagesProjection } from '../../../projections/messages/messages.projection';
import { checkpointName } from '../../../projections/projection';
import { shownTo, Viewer } from './domain/message-visibility';

/**
 * The projections reads of messages need: a message write answers once these show it
 * (not the rooms' last_message_at, which follows a moment later), or, for a send in the
 * embedded server, its readers wait for them (`MessagesReadModel`, unread counts:
 * readAfterWrites).
 */
export const MESSAGE_READS: readonly string[] = [checkpointName(messagesProjection)];

/**
 * Whether a stored message (of a room's timeline or a thread) shows to `viewer`: `visible` is
 * `visibleTo` for everyone, kept in the document so pages and counts select on an index; the
 * viewer's own messages sent under a shadow ban show to them too (while not deleted), and all
 * such messages to a moderator.
 */
export const shownToViewer = (doc: MessageDocument, viewer: Viewer): boolean =>
  doc.visible || (doc.shadow === true && doc.deleted_at === undefined && shownTo(doc, viewer));

/**
 * A page of documents shown to everyone (`visible`), merged with those sent under a shadow ban
 * that the viewer may see (a user's own; a moderator's: everyone's): a second query, asked only
 * for a viewer. `query` reads one of the two.
 */
export async function pageShownTo<D extends MessageDocument>(
  query: (where: Record<string, string | boolean>) => Promise<D[]>,
  options: { direction: 'older' | 'newer'; limit: number; viewer?: Viewer },
): Promise<D[]> {
  const shown = await query({ visible: true });
  const { viewer } = options;
  if (viewer === undefined) return shown;
  const own = (await query({ visible: false, ...(typeof viewer === 'string' && { user_id: viewer }), shadow: true })).filter((doc) => shownToViewer(doc, viewer));
  const older = options.direction === 'older';
  return [...shown, ...own].sort((a, b) => (older ? b.id - a.id : a.id - b.id)).slice(0, options.limit);
}

/**
 * Reads of the messages read model: pages of a room's timeline, single messages, counts. Each
 * read shows every send answered before it began (a send need not wait for this read model:
 * readAfterWrites), except `stored`, a live subscription's, which reads at the position it follows.
 */
@Injectable()
export class MessagesReadModel {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  /** Resolves once the read model shows every send answered so far (at once when sends waited for it themselves). */
  caughtUp(): Promise<void> {
    return readAfterWrites(this.readYourWrites, MESSAGE_READS);
  }

  /** A shown message; with `viewer` (a shadow-banned user), also their own messages sent under the ban (a moderator: anyone's). */
  async get(instanceId: string, roomId: string, messageId: number, viewer?: Viewer): Promise<MessageDocument | null> {
    await this.caughtUp();
    const doc = await this.readModels.get<MessageDocument>(MESSAGES, messageDocumentId(instanceId, roomId, messageId));
    return doc && shownToViewer(doc, viewer) ? doc : null;
  }

  /** A message as stored, shown or not (a live subscription's deletes and edits tell apart whose shadow message it was). */
  stored(instanceId: string, roomId: string, messageId: number): Promise<MessageDocument | null> {
    return this.readModels.get<MessageDocument>(MESSAGES, messageDocumentId(instanceId, roomId, messageId));
  }

  /**
   * Older: ids below `initialId`, newest first. Newer: ids above it, oldest first. With
   * `viewer` (a shadow-banned user, or a moderator), the messages sent under a ban that they
   * may see are merged in: a second query over the room's hidden messages, asked only for a viewer.
   */
  async page(
    instanceId: string,
    roomId: string,
    options: { initialId?: number; direction: 'older' | 'newer'; limit: number; viewer?: Viewer },
  ): Promise<MessageDocument[]> {
    await this.caughtUp();
    const older = options.direction === 'older';
    const query = (where: Record<string, string | boolean>) =>
      this.readModels.find<MessageDocument>(MESSAGES, {
        where: {
          instance_id: instanceId,
          room_id: roomId,
          ...where,
          ...(options.initialId !== undefined && { id: older ? { lt: options.initialId } : { gt: options.initialId } }),
        },
        sort: [{ field: 'id', descending: older }],
        limit: options.limit,
      });
    return pageShownTo(query, options);
  }

  /** The newest `limit` messages, oldest first (what a room subscription replays). */
  async latest(instanceId: string, roomId: string, limit: number, viewer?: string): Promise<MessageDocument[]> {
    return (await this.page(instanceId, roomId, { direction: 'older', limit, ...(viewer !== undefined && { viewer }) })).reverse();
  }

  /** Messages after `afterId`, oldest first (what a resumed room subscription replays). */
  after(instanceId: string, roomId: string, afterId: number, limit = 1000, viewer?: string): Promise<MessageDocument[]> {
    return this.page(instanceId, roomId, { initialId: afterId, direction: 'newer', limit, ...(viewer !== undefined && { viewer }) });
  }

  /** The room a message id belongs to (ids are unique per instance). */
  async findById(instanceId: string, messageId: number): Promise<MessageDocument | null> {
    await this.caughtUp();
    const [doc] = await this.readModels.find<MessageDocument>(MESSAGES, {
      where: { instance_id: instanceId, id: messageId, visible: true },
      limit: 1,
    });
    return doc ?? null;
  }
}
