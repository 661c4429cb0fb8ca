import { Injectable, OnModuleInit } from '@nestjs/common';
import { RecordedEvent } from '../../shared/domain/event';
import { parseStreamName } from '../../shared/domain/streams';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { messagesStream } from './domain/message.decider';
import { MessageDeleted, MessageEdited, ReactionEvent } from './domain/message.events';

const ROUTED = new Set(['MessageEdited', 'MessageDeleted', 'MessageReactionAdded', 'MessageReactionRemoved']);

/**
 * Edits, deletions and reactions live in each message's own stream; live listeners of a room
 * listen to its timeline's name. This hands them to those listeners too.
 */
export const routeMessageChangesToTimeline = (event: RecordedEvent): readonly string[] => {
  if (!ROUTED.has(event.type)) return [];
  const roomId = (event as RecordedEvent<MessageEdited | MessageDeleted | ReactionEvent>).data.room_id;
  const stream = parseStreamName(event.streamName);
  // Older logs wrote changes into the timeline itself, without room_id: delivered under its name already.
  if (roomId === undefined || !stream || stream.category !== 'message') return [];
  return [messagesStream(stream.instanceId, roomId)];
};

@Injectable()
export class MessageChangeRouting implements OnModuleInit {
  constructor(private readonly liveLog: LiveLog) {}

  onModuleInit(): void {
    this.liveLog.addRouter(routeMessageChangesToTimeline);
  }
}
