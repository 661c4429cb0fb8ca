import { unprocessable } from '../../../shared/domain/errors';
import { MessageId, MessageReactionAdded, MessageReactionRemoved, ReactionEvent } from './message.events';
import { ERASED_REACTION_TYPE } from './message.personal-data';

/** Distinct reaction types one message may hold (Discord and Slack keep about 20). */
export const MAX_REACTION_TYPES = 20;
/** A reaction type's longest form, in Unicode code points: an emoji sequence or a shortcode such as `:thumbsup:`. */
export const MAX_REACTION_TYPE_LENGTH = 32;

/** A reaction type is printable text without spaces: no control character, separator or whitespace. */
const PRINTABLE_WITHOUT_SPACES = /^[^\p{Cc}\p{Z}\s]+$/u;

/**
 * Reaction type → the reactors holding it, each as `reactorKey` (the incarnation of the user id)
 * → whether they reacted under a shadow ban (shown to them alone: its removal must say so too).
 */
export type ReactionsState = ReadonlyMap<string, ReadonlyMap<string, boolean>>;
export const NO_REACTIONS: ReactionsState = new Map();

export interface Reactor {
  readonly userId: string;
  /** The incarnation: a user created again with the same id is another person, whose reactions are their own. */
  readonly userCreatedAt: string;
}

interface ReactionChangeOf<T extends string> {
  readonly type: T;
  readonly reaction: string;
  readonly reactor: Reactor;
  readonly id: MessageId;
  readonly roomId: string;
  readonly now: string;
  /** The reactor is under a shadow ban: their reaction shows to them alone. */
  readonly shadow?: boolean;
}
export type ReactionChange = ReactionChangeOf<'AddReaction'> | ReactionChangeOf<'RemoveReaction'>;

const reactorKey = (userId: string, userCreatedAt: string) => `${userCreatedAt} ${userId}`;

/** 422 for a type that is empty, too long, or holds spaces or control characters. */
export const validReaction = (reaction: string): void => {
  if (typeof reaction !== 'string' || reaction.length === 0 || !PRINTABLE_WITHOUT_SPACES.test(reaction)) {
    throw unprocessable('invalid_reaction_type', 'A reaction type is printable text without spaces, e.g. 👍 or :thumbsup:');
  }
  if ([...reaction].length > MAX_REACTION_TYPE_LENGTH) {
    throw unprocessable('reaction_type_too_long', `A reaction type is at most ${MAX_REACTION_TYPE_LENGTH} characters`);
  }
};

/** Whether a type shows to the reactor `key`: someone holds it not under a shadow ban, or they hold it themselves. */
const typeShownTo = (holders: ReadonlyMap<string, boolean>, key: string): boolean => holders.has(key) || [...holders.values()].some((shadow) => !shadow);

/**
 * Adding a reaction the user already holds adds nothing (idempotent), unless they hold it from a
 * shadow ban since lifted (shown to no one now: added again, for everyone); a new type past the cap is
 * refused. The cap counts the types the reactor sees, so reactions shown to one user alone (a
 * shadow ban) neither show through the cap nor take types from everyone else.
 */
export const addReaction = (change: ReactionChange, state: ReactionsState): ReactionEvent[] => {
  const key = reactorKey(change.reactor.userId, change.reactor.userCreatedAt);
  const holders = state.get(change.reaction);
  const held = holders?.get(key);
  if (held !== undefined && !(held && !change.shadow)) return [];
  const seen = [...state.values()].filter((h) => typeShownTo(h, key)).length;
  if (!(holders && typeShownTo(holders, key)) && seen >= MAX_REACTION_TYPES) {
    throw unprocessable('too_many_reaction_types', `A message holds at most ${MAX_REACTION_TYPES} distinct reaction types`);
  }
  return [
    {
      type: 'MessageReactionAdded',
      data: {
        id: change.id,
        room_id: change.roomId,
        type: change.reaction,
        user_id: change.reactor.userId,
        user_created_at: change.reactor.userCreatedAt,
        created_at: change.now,
        ...(change.shadow && { shadow: true as const }),
      },
    },
  ];
};

/** Removing a reaction the user does not hold removes nothing (idempotent). */
export const removeReaction = (change: ReactionChange, state: ReactionsState): ReactionEvent[] => {
  const shadow = state.get(change.reaction)?.get(reactorKey(change.reactor.userId, change.reactor.userCreatedAt));
  if (shadow === undefined) return [];
  return [
    {
      type: 'MessageReactionRemoved',
      data: {
        id: change.id,
        room_id: change.roomId,
        type: change.reaction,
        user_id: change.reactor.userId,
        user_created_at: change.reactor.userCreatedAt,
        removed_at: change.now,
        // A reaction added under a shadow ban was its reactor's alone: so is its removal, ban or no ban now.
        ...(shadow && { shadow: true as const }),
      },
    },
  ];
};

/** A new state: the type's holders copied (not the others'), since states are cached and shared. */
export const reactionAdded = (state: ReactionsState, data: MessageReactionAdded['data']): ReactionsState => {
  if (data.type === ERASED_REACTION_TYPE) return state; // its key destroyed: no longer anyone's reaction
  const next = new Map(state);
  next.set(data.type, new Map(state.get(data.type)).set(reactorKey(data.user_id, data.user_created_at), data.shadow === true));
  return next;
};

export const reactionRemoved = (state: ReactionsState, data: MessageReactionRemoved['data']): ReactionsState => {
  if (data.type === ERASED_REACTION_TYPE) return state;
  const holders = state.get(data.type);
  const key = reactorKey(data.user_id, data.user_created_at);
  if (!holders?.has(key)) return state;
  const next = new Map(state);
  const rest = new Map(holders);
  rest.delete(key);
  if (rest.size === 0) next.delete(data.type);
  else next.set(data.type, rest);
  return next;
};
