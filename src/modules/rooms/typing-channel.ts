import { ephemeralChannel } from '../../shared/ports/ephemeral-bus.port';

/** Where a room's typing signals travel; the room message subscription turns them into `is_typing` events. */
export const typingChannel = (instanceId: string, roomId: string): string =>
  ephemeralChannel('typing', instanceId, roomId);

/** What is published on a typing channel: who is typing. */
export interface TypingSignal {
  readonly user_id: string;
}
