import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { ContentReadEvent } from './content-read.events';

/** One stream per room of the content reads made through the admin route (apart from the room's own, whose writes it must not contend with). */
export const CONTENT_READ_CATEGORY = 'contentread';
export const contentReadStream = (instanceId: string, roomId: string) => streamName(CONTENT_READ_CATEGORY, instanceId, roomId);

export interface RecordContentRead {
  readonly type: 'RecordContentRead';
  readonly roomId: string;
  /** The ids of the messages about to be answered with their content. */
  readonly messageIds: readonly number[];
  /** The thread whose replies they are (a page of a thread, not of the room's timeline). */
  readonly parentId?: number;
  readonly now: string;
}

/**
 * Records a content read: always, whatever came before (a read is a fact, not a decision), so
 * the state is nothing and a stream of any length loads from its newest event.
 */
export const contentReadDecider: Decider<null, RecordContentRead, ContentReadEvent> = {
  initialState: () => null,
  evolve: () => null,
  foldsFrom: () => true,
  decide: ({ roomId, messageIds, parentId, now }) => [
    {
      type: 'MessageContentRead',
      data: {
        room_id: roomId,
        message_count: messageIds.length,
        first_message_id: messageIds.length ? Math.min(...messageIds) : null,
        last_message_id: messageIds.length ? Math.max(...messageIds) : null,
        ...(parentId !== undefined && { parent_id: parentId }),
        read_at: now,
      },
    },
  ],
};
