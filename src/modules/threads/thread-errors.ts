import { notFound, unprocessable } from '../../shared/domain/errors';

/** A thread's first message that is not (or no longer) a message of the room: replying, paging and cursors all answer it. */
export const parentNotFound = (parentId: number, roomId: string) =>
  notFound('parent_not_found', `The message ${parentId} is not a message of the room ${roomId}`);

/** A reply named as a thread's first message: threads are one level deep (as Slack's and Stream's), so it has no thread to reply in, page or read. */
export const parentIsReply = (messageId: number, parentId: number) =>
  unprocessable('parent_is_reply', `The message ${messageId} is a reply in the thread of ${parentId}: its thread is that one (threads are one level deep)`);
