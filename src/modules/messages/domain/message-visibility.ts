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
 * Whether `viewer` may see a message: one sent under a shadow ban shows to its sender alone,
 * so the banned user does not notice the ban and nobody else sees what they send. `viewer`
 * undefined: everyone else, as readers shared by all users see it (a projection's counts and
 * summaries, webhooks, search, a token without a user).
 */
export const shownTo = (message: VisibilityFlags, viewer: string | undefined): boolean =>
  message.shadow !== true || (viewer !== undefined && message.user_id === viewer);

/** Who may see this message in this place: the one rule every reader of messages applies. */
export const visibleTo = (message: VisibilityFlags, place: MessagePlace, viewer: string | undefined): boolean =>
  shownIn(message, place) && shownTo(message, viewer);
