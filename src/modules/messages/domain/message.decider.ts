import { Decider } from '../../../shared/domain/decider';
import { DomainError, forbidden, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { MessagePart } from './message-parts';
import { MessageEvent, MessageId, MessageIdsReserved } from './message.events';

/** A room's timeline, kept apart from the room's settings and membership (a different write rate). */
export const messagesStream = (instanceId: string, roomId: string) => streamName('messages', instanceId, roomId);
/** Where processes reserve blocks of message ids for an instance: one append per block, not per message. */
export const messageIdsStream = (instanceId: string) => `messageids-${instanceId}`;

interface StoredMessage {
  readonly userId: string;
  readonly roomCreatedAt: string;
  readonly deleted: boolean;
}

export interface TimelineState {
  readonly lastId: MessageId;
  readonly messages: ReadonlyMap<MessageId, StoredMessage>;
}

/** The id offered is not above the timeline's last id: allocate a higher one and retry. */
export class StaleMessageIdError extends Error {
  constructor(readonly lastId: MessageId) {
    super(`message id must be above ${lastId}`);
  }
}

export type TimelineCommand =
  | { type: 'SendMessage'; id: MessageId; userId: string; parts: MessagePart[]; roomCreatedAt: string; now: string }
  | {
      type: 'EditMessage';
      id: MessageId;
      roomCreatedAt: string;
      actor: { userId?: string; su: boolean };
      parts: MessagePart[];
      now: string;
    }
  | {
      type: 'DeleteMessage';
      id: MessageId;
      roomCreatedAt: string;
      actor: { userId?: string; su: boolean };
      tombstone: boolean;
      now: string;
    };

export const messageNotFound = (id: MessageId) => notFound('message_not_found', `The message ${id} does not exist`);

export const timelineDecider: Decider<TimelineState, TimelineCommand, MessageEvent> = {
  initialState: () => ({ lastId: 0, messages: new Map() }),

  // The message map is shared from one state to the next (folding a long timeline stays
  // linear): a timeline state is only ever used as the latest state of its stream.
  evolve(state, event) {
    const messages = state.messages as Map<MessageId, StoredMessage>;
    switch (event.type) {
      case 'MessageSent':
        messages.set(event.data.id, { userId: event.data.user_id, roomCreatedAt: event.data.room_created_at, deleted: false });
        return { lastId: Math.max(state.lastId, event.data.id), messages };
      case 'MessageDeleted': {
        const m = messages.get(event.data.id);
        if (m) messages.set(event.data.id, { ...m, deleted: true });
        return { ...state };
      }
      default:
        return state;
    }
  },

  decide(command, state) {
    if (command.type === 'SendMessage') {
      if (command.id <= state.lastId) throw new StaleMessageIdError(state.lastId);
      const { id, userId, parts, roomCreatedAt, now } = command;
      return [
        { type: 'MessageSent', data: { id, user_id: userId, parts, room_created_at: roomCreatedAt, created_at: now } },
      ];
    }
    const message = state.messages.get(command.id);
    // A message of an earlier room of the same id does not exist for this room.
    if (!message || message.deleted || message.roomCreatedAt !== command.roomCreatedAt) throw messageNotFound(command.id);
    if (!command.actor.su && command.actor.userId !== message.userId) {
      throw forbidden('not_message_sender', 'Only the sender of a message (or su) may change it');
    }
    if (command.type === 'EditMessage') {
      return [{ type: 'MessageEdited', data: { id: command.id, parts: command.parts, updated_at: command.now } }];
    }
    return [{ type: 'MessageDeleted', data: { id: command.id, tombstone: command.tombstone, deleted_at: command.now } }];
  },
};

export interface IdBlockState {
  readonly last: MessageId;
}

export const idBlockDecider: Decider<IdBlockState, { type: 'ReserveIds'; size: number }, MessageIdsReserved> = {
  initialState: () => ({ last: 0 }),
  evolve: (state, event) => ({ last: Math.max(state.last, event.data.last) }),
  decide(command, state) {
    if (command.size < 1) throw new DomainError('bad_request', 'invalid_block', 'A block holds at least one id');
    return [{ type: 'MessageIdsReserved', data: { first: state.last + 1, last: state.last + command.size } }];
  },
};
