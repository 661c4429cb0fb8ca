import { Injectable, OnModuleInit } from '@nestjs/common';
import { RecordedEvent } from '../../shared/domain/event';
import { parseStreamName } from '../../shared/domain/streams';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { messagesStream } from './domain/message.decider';
import { MessageDeleted, MessageEdited } from './domain/message.events';

/**
 * Edits and deletions live in each message's own stream; live listeners of a room listen to
 * its timeline's name. This hands them to those listeners too.
 */
export const routeMessageChangesToTimeline = (event: RecordedEvent): readonly string[] => {
  if (event.type !== 'MessageEdited' && event.type !== 'MessageDeleted') return [];
  const roomId = (event as RecordedEvent<MessageEdited | MessageDeleted>).data.room_id;
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
