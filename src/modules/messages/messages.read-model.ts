import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { MESSAGES, MessageDocument, messageDocumentId, messagesProjection } from '../../../projections/messages/messages.projection';
import { checkpointName } from '../../../projections/projection';

/**
 * The projections reads of messages need: a message write answers once these show it
 * (not the rooms' last_message_at or unread counts, which follow a moment later).
 */
export const MESSAGE_READS: readonly string[] = [checkpointName(messagesProjection)];

/** A message sent under a shadow ban, to the one who sent it (while it is not deleted). */
export const shownToSender = (doc: MessageDocument, viewer: string | undefined): boolean =>
  doc.shadow === true && viewer !== undefined && doc.user_id === viewer && doc.deleted_at === undefined;

/** Reads of the messages read model: pages of a room's timeline, single messages, counts. */
@Injectable()
export class MessagesReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** A shown message; with `viewer` (a shadow-banned user), also their own messages sent under the ban. */
  async get(instanceId: string, roomId: string, messageId: number, viewer?: string): Promise<MessageDocument | null> {
    const doc = await this.readModels.get<MessageDocument>(MESSAGES, messageDocumentId(instanceId, roomId, messageId));
    return doc && (doc.visible || shownToSender(doc, viewer)) ? doc : null;
  }

  /** A message as stored, shown or not (a live subscription's deletes and edits tell apart whose shadow message it was). */
  stored(instanceId: string, roomId: string, messageId: number): Promise<MessageDocument | null> {
    return this.readModels.get<MessageDocument>(MESSAGES, messageDocumentId(instanceId, roomId, messageId));
  }

  /**
   * Older: ids below `initialId`, newest first. Newer: ids above it, oldest first. With
   * `viewer` (a shadow-banned user), their own messages sent under the ban are merged in: a
   * second query over the room's hidden messages, asked only for such a user.
   */
  async page(
    instanceId: string,
    roomId: string,
    options: { initialId?: number; direction: 'older' | 'newer'; limit: number; viewer?: string },
  ): Promise<MessageDocument[]> {
    const older = options.direction === 'older';
    const query = (where: Record<string, string | number | boolean>) =>
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
    const shown = await query({ visible: true });
    if (options.viewer === undefined) return shown;
    const own = await query({ visible: false, user_id: options.viewer, shadow: true });
    const merged = [...shown, ...own.filter((doc) => doc.deleted_at === undefined)].sort((a, b) => (older ? b.id - a.id : a.id - b.id));
    return merged.slice(0, options.limit);
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
    const [doc] = await this.readModels.find<MessageDocument>(MESSAGES, {
      where: { instance_id: instanceId, id: messageId, visible: true },
      limit: 1,
    });
    return doc ?? null;
  }
}
