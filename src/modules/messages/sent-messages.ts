import type { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { firstEventReaching } from '../../shared/application/write-path/stream-position-search';
import { RecordedEvent } from '../../shared/domain/event';
import { messagesStream, SentMessage, sentMessageOf, timelineDecider } from './domain/message.decider';
import { MessageId, MessageSent } from './domain/message.events';

/** How the write path reads streams: the CommandPipeline's (its cache), or StreamStates of their own. */
export type StreamReads = Pick<CommandPipeline, 'load' | 'readStream'>;

/**
 * Finds a message in its room's timeline without reading the timeline: ids grow with the
 * timeline's revisions, so a binary search over revisions with single-event reads finds it
 * in about log2(length) reads (20 for a million messages), however long the room grew.
 * A plain class (the module builds it): the embedded server's projector thread finds messages
 * too, through the write path's stream reads alone (StreamStates), and loads no Nest package.
 */
export class SentMessages {
  constructor(private readonly pipeline: StreamReads) {}

  async find(instanceId: string, roomId: string, id: MessageId): Promise<SentMessage | null> {
    const stream = messagesStream(instanceId, roomId);
    const { revision: newest, epoch } = await this.pipeline.load(stream, timelineDecider);
    // The first message at or past `id`; older timelines also hold edits (stepped over), and
    // messages before the instance's wipe (the stream's first revisions) are gone.
    const reaching = (event: RecordedEvent) =>
      event.type !== 'MessageSent' ? null : (epoch == null || event.position > epoch) && (event as RecordedEvent<MessageSent>).data.id >= id;
    const event = (await firstEventReaching((s, options) => this.pipeline.readStream(s, options), stream, newest, reaching)) as RecordedEvent<MessageSent> | null;
    if (!event || event.data.id !== id) return null;
    return sentMessageOf(event.data);
  }
}
