import { ThreadReplyFields } from './message.events';

/**
 * Where a message may show: its room's timeline (pages, subscriptions, last message time,
 * unread counts) or its thread (reply pages, summaries, a user's threads).
 */
export type MessagePlace = 'room' | 'thread';

/** What a message's events and documents carry that decides who sees it. */
export interface VisibilityFlags extends Pick<ThreadReplyFields, 'parent_id' | 'also_in_room'> {
  /** Absent on an edit or a deletion: who sent it is then read from the message's document. */
  readonly user_id?: string;
  /** Sent under a shadow ban. */
  readonly shadow?: true;
}

/**
 * Whether a message belongs in a place: a reply shows in its thread, and in its room only with
 * `also_in_room` (so the original SDKs never meet a message whose parent they cannot show,
 * docs/api.md Threads); a message naming no parent is in no thread.
 */
export const shownIn = (message: VisibilityFlags, place: MessagePlace): boolean =>
  place === 'thread' ? message.parent_id !== undefined : message.parent_id === undefined || message.also_in_room === true;

/**
 * The moderators who judge what is sent under a shadow ban (the console's reads, su tokens
 * only): they see it, marked, where nobody else but its sender does. No user id is this value,
 * so no chat route's viewer is a moderator.
 */
export const MODERATOR = Object.freeze({ moderator: true as const });

/**
 * Who reads: a user (by id), a moderator, or undefined: everyone else, as readers shared by all
 * users see it (a projection's counts and summaries, webhooks, search, a token without a user).
 */
export type Viewer = string | typeof MODERATOR | undefined;

/**
 * Whether `viewer` may see a message: one sent under a shadow ban shows to its sender alone,
 * so the banned user does not notice the ban and nobody else sees what they send, and to the
 * moderators who must judge it.
 */
export const shownTo = (message: VisibilityFlags, viewer: Viewer): boolean =>
  message.shadow !== true || viewer === MODERATOR || (viewer !== undefined && message.user_id === viewer);

/** Who may see this message in this place: the one rule every reader of messages applies. */
export const visibleTo = (message: VisibilityFlags, place: MessagePlace, viewer: Viewer): boolean =>
  shownIn(message, place) && shownTo(message, viewer);
