import { Decider } from '../../../shared/domain/decider';
import { DomainError, forbidden, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { MessagePart } from './message-parts';
import { MessageEvent, MessageId, MessageIdsReserved, ReactionEvent, ThreadReplyFields } from './message.events';
import { shownTo } from './message-visibility';
import { addReaction, NO_REACTIONS, ReactionChange, reactionAdded, reactionRemoved, ReactionsState, removeReaction, validReaction } from './message-reactions';

/** A room's timeline, kept apart from the room's settings and membership (a different write rate). */
export const messagesStream = (instanceId: string, roomId: string) => streamName('messages', instanceId, roomId);
/** Where processes reserve blocks of message ids for an instance: one append per block, not per message. */
export const messageIdsStream = (instanceId: string) => `messageids-${instanceId}`;

/**
 * Where a message's edits and deletion go: its own short stream, so deciding about one
 * message reads that message alone, not its room's history. Ids are unique per instance.
 */
export const messageStream = (instanceId: string, messageId: MessageId) => streamName('message', instanceId, String(messageId));

/** All a timeline's decisions need: ids only grow, so its newest message fixes the state. */
export interface TimelineState {
  readonly lastId: MessageId;
}

/**
 * The id offered is not above the timeline's last id. The pipeline never decides such a command
 * (`outdated`: it builds it again with a higher id); deciding one anyway is a bug.
 */
export class StaleMessageIdError extends Error {
  constructor(readonly lastId: MessageId) {
    super(`message id must be above ${lastId}`);
  }
}

export type TimelineCommand = {
  type: 'SendMessage';
  id: MessageId;
  userId: string;
  /** The sender's `created_at`: the incarnation of the user id that sent it. */
  userCreatedAt: string;
  parts: MessagePart[];
  roomCreatedAt: string;
  now: string;
  /** A thread reply: its parent (checked by the use case: a message of this room that is no reply), and whether it shows in the room too. */
  thread?: ThreadOfReply;
  /** The sender is shadow banned: the message is theirs alone to see. */
  shadow?: boolean;
};

export interface ThreadOfReply {
  readonly parentId: MessageId;
  readonly parentUserId: string;
  readonly alsoInRoom: boolean;
}

/** The fields a reply's send carries (none for a message that is no reply). */
export const threadFieldsOf = (thread: ThreadOfReply | undefined): ThreadReplyFields =>
  thread ? { parent_id: thread.parentId, ...(thread.alsoInRoom && { also_in_room: true as const }), parent_user_id: thread.parentUserId } : {};

/** Ids only grow along a timeline: an id at or below its last was taken before another process's send landed. */
const idNotAbove = (command: TimelineCommand, state: TimelineState): boolean => command.id <= state.lastId;

export const messageNotFound = (id: MessageId) => notFound('message_not_found', `The message ${id} does not exist`);

export const timelineDecider: Decider<TimelineState, TimelineCommand, MessageEvent> = {
  initialState: () => ({ lastId: 0 }),
  // Timelines written before edits and deletions had their own streams also hold those; they change no id.
  foldsFrom: (event) => event.type === 'MessageSent',
  evolve: (state, event) => (event.type === 'MessageSent' ? { lastId: Math.max(state.lastId, event.data.id) } : state),
  outdated: idNotAbove,

  decide(command, state) {
    if (idNotAbove(command, state)) throw new StaleMessageIdError(state.lastId);
    const { id, userId, userCreatedAt, parts, roomCreatedAt, now } = command;
    return [
      {
        type: 'MessageSent',
        data: {
          id,
          user_id: userId,
          user_created_at: userCreatedAt,
          parts,
          room_created_at: roomCreatedAt,
          created_at: now,
          ...threadFieldsOf(command.thread),
          ...(command.shadow && { shadow: true as const }),
        },
      },
    ];
  },
};

/** What the room's timeline says of a message: who sent it (which incarnation of the user id), to which incarnation of the room, when. */
export interface SentMessage {
  readonly userId: string;
  /** Absent for messages logged before senders' incarnations were. */
  readonly userCreatedAt?: string;
  readonly roomCreatedAt: string;
  readonly createdAt: string;
  /** A thread reply's parent, and whether the reply shows in the room too (absent: no reply). */
  readonly parentId?: MessageId;
  readonly alsoInRoom?: true;
  /** Sent under a shadow ban: its sender's alone. */
  readonly shadow?: true;
}

/** What a reply's edits and deletion carry of its thread (and of a shadow ban it was sent under), so that thread views and room views tell it apart without its send. */
const threadOfSent = (sent: SentMessage): { parent_id?: MessageId; also_in_room?: true; shadow?: true } =>
  sent.parentId === undefined
    ? {}
    : { parent_id: sent.parentId, ...(sent.alsoInRoom && { also_in_room: true as const }), ...(sent.shadow && { shadow: true as const }) };

/** The fields of a logged send that `SentMessage` keeps. */
export const sentMessageOf = (data: {
  user_id: string;
  user_created_at?: string;
  room_created_at: string;
  created_at: string;
  parent_id?: MessageId;
  also_in_room?: true;
  shadow?: true;
}): SentMessage => ({
  userId: data.user_id,
  ...(data.user_created_at !== undefined && { userCreatedAt: data.user_created_at }),
  roomCreatedAt: data.room_created_at,
  createdAt: data.created_at,
  ...(data.parent_id !== undefined && { parentId: data.parent_id }),
  ...(data.also_in_room && { alsoInRoom: true as const }),
  ...(data.shadow && { shadow: true as const }),
});

/** Whether `viewer` may see a message the room's timeline holds (`shownTo`: one sent under a shadow ban is its sender's alone). */
export const sentShownTo = (sent: SentMessage, viewer: string | undefined): boolean =>
  shownTo({ user_id: sent.userId, ...(sent.shadow && { shadow: sent.shadow }) }, viewer);

/**
 * Whether the user id's incarnation created at `userCreatedAt` (null: none exists now) sent
 * the message. A message logged without its sender's incarnation was sent by the current one
 * only if that one already existed then: a user deleted and created again since is another person.
 */
export const sentBy = (sent: SentMessage, userId: string | undefined, userCreatedAt: string | null): boolean =>
  userId === sent.userId &&
  userCreatedAt !== null &&
  (sent.userCreatedAt !== undefined ? sent.userCreatedAt === userCreatedAt : userCreatedAt <= sent.createdAt);

export interface MessageState {
  readonly deleted: boolean;
  /** Who reacted with what (see message-reactions.ts): what idempotent adds and the caps decide on. */
  readonly reactions: ReactionsState;
}

interface MessageChange {
  id: MessageId;
  roomId: string;
  /** Found in the room's timeline, or null when the timeline holds no such message. */
  sent: SentMessage | null;
  /** The room as it is now: a message of an earlier room of the same id does not exist for it. */
  roomCreatedAt: string;
  /** `userCreatedAt`: the current incarnation of the actor's user id (null: none exists). */
  actor: { userId?: string; userCreatedAt: string | null; su: boolean };
  now: string;
}

export type MessageCommand =
  | (MessageChange & { type: 'EditMessage'; parts: MessagePart[] })
  | (MessageChange & { type: 'DeleteMessage'; tombstone: boolean })
  | (MessageChange & Extract<ReactionChange, { type: 'AddReaction' }>)
  | (MessageChange & Extract<ReactionChange, { type: 'RemoveReaction' }>);

/**
 * Decides edits, deletion and reactions of one message on its own stream (`messageStream`):
 * a reaction and a deletion are decided on the same stream, so no reaction lands after the
 * message's deletion.
 */
export const messageDecider: Decider<MessageState, MessageCommand, MessageEvent | ReactionEvent> = {
  initialState: () => ({ deleted: false, reactions: NO_REACTIONS }),
  // Nothing follows a deletion, so a deletion alone gives the whole state; otherwise the reactions need the stream from its start.
  foldsFrom: (event) => event.type === 'MessageDeleted',
  evolve: (state, event) => {
    switch (event.type) {
      case 'MessageDeleted':
        return { deleted: true, reactions: NO_REACTIONS };
      case 'MessageReactionAdded':
        return { ...state, reactions: reactionAdded(state.reactions, event.data) };
      case 'MessageReactionRemoved':
        return { ...state, reactions: reactionRemoved(state.reactions, event.data) };
      default:
        return state;
    }
  },

  decide(command, state) {
    const { sent } = command;
    if (!sent || state.deleted || sent.roomCreatedAt !== command.roomCreatedAt) throw messageNotFound(command.id);
    if (command.type === 'AddReaction' || command.type === 'RemoveReaction') {
      // A message the reactor may not see (sent under someone else's shadow ban) is not there for them (su sees it: an erasure removes what was added before this rule).
      if (!command.actor.su && !sentShownTo(sent, command.reactor.userId)) throw messageNotFound(command.id);
      validReaction(command.reaction);
      return command.type === 'AddReaction' ? addReaction(command, state.reactions) : removeReaction(command, state.reactions);
    }
    if (!command.actor.su && !sentBy(sent, command.actor.userId, command.actor.userCreatedAt)) {
      throw forbidden('not_message_sender', 'Only the sender of a message (or su) may change it');
    }
    if (command.type === 'EditMessage') {
      return [
        { type: 'MessageEdited', data: { id: command.id, room_id: command.roomId, parts: command.parts, updated_at: command.now, ...threadOfSent(sent) } },
      ];
    }
    return [
      {
        type: 'MessageDeleted',
        data: { id: command.id, room_id: command.roomId, tombstone: command.tombstone, deleted_at: command.now, ...threadOfSent(sent) },
      },
    ];
  },
};

export interface IdBlockState {
  readonly last: MessageId;
}

export const idBlockDecider: Decider<IdBlockState, { type: 'ReserveIds'; size: number }, MessageIdsReserved> = {
  initialState: () => ({ last: 0 }),
  // Blocks are reserved in increasing order: the newest one holds the highest id.
  foldsFrom: () => true,
  evolve: (state, event) => ({ last: Math.max(state.last, event.data.last) }),
  decide(command, state) {
    if (command.size < 1) throw new DomainError('bad_request', 'invalid_block', 'A block holds at least one id');
    return [{ type: 'MessageIdsReserved', data: { first: state.last + 1, last: state.last + command.size } }];
  },
};
