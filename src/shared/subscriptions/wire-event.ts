import { EventChannel } from './event-channel';

/** The body of every chatkit subscription event (wire study §4: clients read event_name and data). */
export const chatkitEvent = (event_name: string, data: unknown, timestamp: string = new Date().toISOString()) => ({
  event_name,
  data,
  timestamp,
});

/** A room's streams end with 404 when the room is deleted: a 4xx end, which clients do not retry. */
export const endForDeletedRoom = (channel: EventChannel, roomId: string): void =>
  channel.end(404, {
    error: 'services/chatkit/not_found/room_not_found',
    error_description: `The room "${roomId}" was deleted`,
  });
