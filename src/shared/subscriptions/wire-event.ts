import { EventChannel } from './event-channel';
import { DomainError } from '../domain/errors';

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

/**
 * A stream that fails once open (a read model that stays behind, a read that throws) ends
 * with a 503, which the SDKs retry: they reconnect and resume rather than wait on a stream
 * that will say nothing more.
 */
export const endForFailure = (channel: EventChannel, service: string, error: unknown): void => {
  const known = error instanceof DomainError && error.status >= 500;
  channel.end(503, {
    error: `services/${service}/${known ? error.code : 'unavailable/subscription_interrupted'}`,
    error_description: known ? error.description : 'The subscription was interrupted; subscribe again',
  });
};
