import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/command-pipeline';
import { RecordedEvent } from '../../shared/domain/event';
import { messagesStream, SentMessage, timelineDecider } from './domain/message.decider';
import { MessageId, MessageSent } from './domain/message.events';

/** Events read per step past events that are not messages (older timelines also hold edits). */
const SCAN_PAGE = 16;

/**
 * Finds a message in its room's timeline without reading the timeline: ids grow with the
 * timeline's revisions, so a binary search over revisions with single-event reads finds it
 * in about log2(length) reads (20 for a million messages), however long the room grew.
 */
@Injectable()
export class SentMessages {
  constructor(private readonly pipeline: CommandPipeline) {}

  async find(instanceId: string, roomId: string, id: MessageId): Promise<SentMessage | null> {
    const stream = messagesStream(instanceId, roomId);
    const { revision: newest, epoch } = await this.pipeline.load(stream, timelineDecider);
    for (let low = 0, high = newest; low <= high; ) {
      const middle = Math.floor((low + high) / 2);
      const event = await this.sentAtOrAfter(stream, middle, high);
      if (!event || event.data.id > id) {
        high = middle - 1; // nothing between `middle` and `event` is a message
      } else if (event.data.id < id || (epoch != null && event.position <= epoch)) {
        // Messages before the instance's wipe (the stream's first revisions) are gone.
        low = event.revision + 1;
      } else {
        return { userId: event.data.user_id, roomCreatedAt: event.data.room_created_at };
      }
    }
    return null;
  }

  /** The first MessageSent at a revision from `from` to `to`. */
  private async sentAtOrAfter(stream: string, from: number, to: number): Promise<RecordedEvent<MessageSent> | null> {
    for (let at = from, count = 1; at <= to; count = SCAN_PAGE) {
      const page = await this.pipeline.readStream(stream, { fromRevision: at, maxCount: count });
      for (const event of page) {
        if (event.revision > to) return null;
        if (event.type === 'MessageSent') return event as RecordedEvent<MessageSent>;
      }
      if (page.length < count) return null;
      at = page[page.length - 1].revision + 1;
    }
    return null;
  }
}
