import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { idBlockDecider, messageIdsStream } from './domain/message.decider';
import { MessageId } from './domain/message.events';

const BLOCK_SIZE = 1000;
/**
 * Ids left in a block when the next one is reserved: the reservation writes the next block's
 * data keys over several turns of the event loop, and a busy server's turns are long, so it
 * starts with a quarter of the block left for the sends meanwhile.
 */
const PREFETCH_AT = BLOCK_SIZE / 4;

/**
 * Hands out message ids from blocks this process reserved for the instance (one append per
 * thousand messages, not a hot stream per message). Blocks are reserved in increasing
 * order, so a fresh block lies above every id any process has used: when a room's last id
 * is already past this process's block, the rest of the block is dropped for a new one.
 */
@Injectable()
export class MessageIds {
  private readonly blocks = new Map<string, { next: MessageId; last: MessageId }>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The next block of each instance, being reserved before this one runs out. */
  private readonly upcoming = new Map<string, Promise<{ first: MessageId; last: MessageId }>>();

  constructor(private readonly pipeline: CommandPipeline) {}

  /** An id unique in the instance and greater than `above` (the room's last id). */
  next(instanceId: string, above: MessageId): Promise<MessageId> {
    // One allocation at a time per instance, so concurrent sends never share a reservation.
    const previous = this.queues.get(instanceId) ?? Promise.resolve();
    const result = previous.then(() => this.allocate(instanceId, above));
    const settled = result.catch(() => undefined);
    this.queues.set(instanceId, settled);
    void settled.then(() => {
      if (this.queues.get(instanceId) === settled) this.queues.delete(instanceId);
    });
    return result;
  }

  private async allocate(instanceId: string, above: MessageId): Promise<MessageId> {
    let block = this.blocks.get(instanceId);
    while (!block || block.next > block.last || block.next <= above) {
      const reserved = this.upcoming.get(instanceId) ?? this.reserve(instanceId);
      this.upcoming.delete(instanceId);
      const { first, last } = await reserved;
      block = { next: Math.max(first, above + 1), last };
      this.blocks.set(instanceId, block);
    }
    const id = block.next++;
    // The next block is reserved while the last quarter of this one is handed out, so sends do not
    // wait for it (nor for the data keys it makes ready); one that fails is reserved again when needed.
    if (block.last - block.next < PREFETCH_AT && !this.upcoming.has(instanceId)) {
      const upcoming = this.reserve(instanceId);
      this.upcoming.set(instanceId, upcoming);
      upcoming.catch(() => {
        if (this.upcoming.get(instanceId) === upcoming) this.upcoming.delete(instanceId);
      });
    }
    return id;
  }

  private async reserve(instanceId: string): Promise<{ first: MessageId; last: MessageId }> {
    const now = new Date().toISOString();
    const { events } = await this.pipeline.run(
      messageIdsStream(instanceId),
      idBlockDecider,
      { type: 'ReserveIds', size: BLOCK_SIZE },
      { instance_id: instanceId, actor: { key_id: 'system' }, occurred_at: now },
      // No read shows reservations: waiting for read models here would only delay (or,
      // with lagging projections, fail) the send before its message is even appended.
      { awaitProjections: [] },
    );
    return events[0].data;
  }
}
