import { Decider } from '../../../shared/domain/decider';
import { unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { pinChangeFlags, PinEvent } from './pin.events';

/** A room's pins: one short stream per room, beside its settings and its timeline. */
export const pinsStream = (instanceId: string, roomId: string) => streamName('pins', instanceId, roomId);

/** Pins one room holds at once (Discord keeps 50). */
export const MAX_PINS_PER_ROOM = 50;

interface Pin {
  readonly roomCreatedAt: string;
  readonly until?: string;
}

/**
 * The room's pins by message id, of every incarnation of the room id (a decision reads only its
 * own); and, per user who pinned or unpinned under a shadow ban, what they changed for themselves
 * alone (a pin, or null: unpinned), by message id.
 */
export interface PinsState {
  readonly pins: ReadonlyMap<number, Pin>;
  readonly shadow: ReadonlyMap<string, ReadonlyMap<number, Pin | null>>;
}

/** `shadow`: the user pins or unpins under a shadow ban: for themselves alone. */
export type PinsCommand =
  | { type: 'PinMessage'; roomId: string; roomCreatedAt: string; messageId: number; userId?: string; until?: string; now: string; shadow?: boolean }
  | { type: 'UnpinMessage'; roomId: string; roomCreatedAt: string; messageId: number; now: string; userId?: string; shadow?: boolean };

/** The pins a user sees: everyone's, with the changes they made under a shadow ban over them (none for everyone else: `userId` undefined). */
export const pinsSeenBy = (state: PinsState, userId: string | undefined): ReadonlyMap<number, Pin> => {
  const own = userId !== undefined ? state.shadow.get(userId) : undefined;
  if (!own) return state.pins;
  const seen = new Map(state.pins);
  for (const [messageId, pin] of own) {
    if (pin) seen.set(messageId, pin);
    else seen.delete(messageId);
  }
  return seen;
};

/** A pin that counts now: of this incarnation of the room, and not past its `until`. */
const standing = (pin: Pin | undefined, roomCreatedAt: string, now: string): pin is Pin =>
  pin !== undefined && pin.roomCreatedAt === roomCreatedAt && (pin.until === undefined || pin.until > now);

/** Decides pins of one room: pinning again only changes `until`, unpinning what is not pinned changes nothing. */
export const pinsDecider: Decider<PinsState, PinsCommand, PinEvent> = {
  initialState: () => ({ pins: new Map(), shadow: new Map() }),
  evolve(state, event) {
    const { user_id: userId, shadow } = pinChangeFlags(event);
    if (shadow) {
      if (userId === undefined) return state;
      const own = new Map(state.shadow.get(userId));
      const pin = event.type === 'MessagePinned' ? { roomCreatedAt: event.data.room_created_at, ...(event.data.until !== undefined && { until: event.data.until }) } : null;
      own.set(event.data.message_id, pin);
      return { ...state, shadow: new Map(state.shadow).set(userId, own) };
    }
    const pins = new Map(state.pins);
    if (event.type === 'MessagePinned') {
      pins.set(event.data.message_id, { roomCreatedAt: event.data.room_created_at, ...(event.data.until !== undefined && { until: event.data.until }) });
    } else {
      pins.delete(event.data.message_id);
    }
    return { ...state, pins };
  },

  decide(command, state) {
    const { roomId, roomCreatedAt, messageId, now } = command;
    // Under a shadow ban a user decides on the pins they see, and changes them for themselves alone.
    const shadowUser = command.shadow ? command.userId : undefined;
    const seen = pinsSeenBy(state, shadowUser);
    const shadow = shadowUser !== undefined ? { shadow: true as const } : {};
    const current = seen.get(messageId);
    if (command.type === 'UnpinMessage') {
      if (!standing(current, roomCreatedAt, now)) return [];
      return [
        {
          type: 'MessageUnpinned',
          data: { room_id: roomId, room_created_at: roomCreatedAt, message_id: messageId, unpinned_at: now, ...(shadowUser !== undefined && { unpinned_by: shadowUser }), ...shadow },
        },
      ];
    }
    if (command.until !== undefined && command.until <= now) {
      throw unprocessable('invalid_until', 'until must be a time in the future (RFC 3339)');
    }
    if (standing(current, roomCreatedAt, now)) {
      if (current.until === command.until) return [];
    } else if ([...seen.values()].filter((pin) => standing(pin, roomCreatedAt, now)).length >= MAX_PINS_PER_ROOM) {
      throw unprocessable('too_many_pins', `A room holds at most ${MAX_PINS_PER_ROOM} pinned messages`);
    }
    return [
      {
        type: 'MessagePinned',
        data: {
          room_id: roomId,
          room_created_at: roomCreatedAt,
          message_id: messageId,
          ...(command.userId !== undefined && { pinned_by: command.userId }),
          pinned_at: now,
          ...(command.until !== undefined && { until: command.until }),
          ...shadow,
        },
      },
    ];
  },
};
