import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { MESSAGES, MessageDocument, messageDocumentId, messagesProjection } from '../../../projections/messages/messages.projection';
import { checkpointName } from '../../../projections/projection';

/**
 * The projections reads of messages need: a message write answers once these show it
 * (not the rooms' last_message_at or unread counts, which follow a moment later).
 */
export const MESSAGE_READS: readonly string[] = [checkpointName(messagesProjection)];

/** Reads of the messages read model: pages of a room's timeline, single messages, counts. */
@Injectable()
export class MessagesReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async get(instanceId: string, roomId: string, messageId: number): Promise<MessageDocument | null> {
    const doc = await this.readModels.get<MessageDocument>(MESSAGES, messageDocumentId(instanceId, roomId, messageId));
    return doc?.visible ? doc : null;
  }

  /** Older: ids below `initialId`, newest first. Newer: ids above it, oldest first. */
  page(
    instanceId: string,
    roomId: string,
    options: { initialId?: number; direction: 'older' | 'newer'; limit: number },
  ): Promise<MessageDocument[]> {
    const older = options.direction === 'older';
    return this.readModels.find<MessageDocument>(MESSAGES, {
      where: {
        instance_id: instanceId,
        room_id: roomId,
        visible: true,
        ...(options.initialId !== undefined && { id: older ? { lt: options.initialId } : { gt: options.initialId } }),
      },
      sort: [{ field: 'id', descending: older }],
      limit: options.limit,
    });
  }

  /** The newest `limit` messages, oldest first (what a room subscription replays). */
  async latest(instanceId: string, roomId: string, limit: number): Promise<MessageDocument[]> {
    return (await this.page(instanceId, roomId, { direction: 'older', limit })).reverse();
  }

  /** Messages after `afterId`, oldest first (what a resumed room subscription replays). */
  after(instanceId: string, roomId: string, afterId: number, limit = 1000): Promise<MessageDocument[]> {
    return this.page(instanceId, roomId, { initialId: afterId, direction: 'newer', limit });
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
