import { notFound } from '../../shared/domain/errors';

/** A thread's first message that is not (or no longer) a message of the room: replying, paging and cursors all answer it. */
export const parentNotFound = (parentId: number, roomId: string) =>
  notFound('parent_not_found', `The message ${parentId} is not a message of the room ${roomId}`);
