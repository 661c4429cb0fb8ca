import { ThreadReplyFields } from './message.events';

/**
 * A reply shown in its thread alone: the room's pages, its subscriptions, its last message time
 * and its unread counts leave it out, so the original SDKs never meet a message whose parent
 * they cannot show (see docs/api.md, Threads).
 */
export const threadOnly = (data: ThreadReplyFields): boolean => data.parent_id !== undefined && data.also_in_room !== true;
