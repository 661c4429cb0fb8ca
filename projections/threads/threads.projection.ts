import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageEvent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { ThreadEvent } from '../../src/modules/threads/domain/thread.events';
import type { Document, DocumentRef, ProjectionDefinition, Target } from '../projection';
import { MessageDocument, messageDocumentFrom, messagesProjection } from '../messages/messages.projection';
import { shownTo } from '../../src/modules/messages/domain/message-visibility';

/** Every thread reply, also those shown in the room too, and those sent under a shadow ban (for their sender): what a thread's pages read. */
export const THREAD_REPLIES = 'thread_replies';
/** One summary per thread, by its first message: what parents show. */
export const THREADS = 'threads';
/** One per user and thread they started or replied in, with the thread's latest reply: a user's threads, newest activity first. */
export const THREAD_MEMBERS = 'thread_members';
/** Each user's read cursor per thread. */
export const THREAD_CURSORS = 'thread_cursors';

/** Participants a thread summary names (Stream and Slack show a few faces): the starter, then repliers in the order they first replied. */
export const MAX_THREAD_PARTICIPANTS = 10;

export interface ThreadReplyDocument extends MessageDocument {
  readonly parent_id: number;
  readonly also_in_room?: true;
}

export interface ThreadDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly parent_id: number;
  /** Replies not deleted. */
  readonly reply_count: number;
  readonly last_reply_id: number;
  readonly last_reply_at: string;
  readonly participants: readonly string[];
}

export interface ThreadMemberDocument extends Document {
  readonly instance_id: string;
  readonly user_id: string;
  readonly room_id: string;
  readonly parent_id: number;
  /** The thread's newest reply: what the user's threads are ordered and paged by. */
  readonly last_reply_id: number;
  readonly last_reply_at: string;
}

export interface ThreadCursorDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly parent_id: number;
  readonly user_id: string;
  readonly position: number;
  readonly updated_at: string;
}

export const threadReplyDocumentId = (instanceId: string, roomId: string, messageId: number) => documentId(instanceId, roomId, String(messageId));
export const threadDocumentId = (instanceId: string, roomId: string, parentId: number) => documentId(instanceId, roomId, String(parentId));
export const threadMemberDocumentId = (instanceId: string, userId: string, roomId: string, parentId: number) =>
  documentId(instanceId, userId, roomId, String(parentId));
export const threadCursorDocumentId = (instanceId: string, roomId: string, parentId: number, userId: string) =>
  documentId(instanceId, roomId, String(parentId), userId);

type Folded = MessageEvent | ThreadEvent | RoomDeleted | UserDeleted;
type ThreadsDocument = ThreadReplyDocument | ThreadDocument | ThreadMemberDocument | ThreadCursorDocument;

/**
 * Threads: their replies (paged as a room's messages are), a summary per parent, who takes
 * part in each (a user's threads) and each user's read cursor per thread. Replies are messages
 * of the room's timeline that name a parent: edited, deleted and erased as messages are, and
 * gone with their room; a user's membership and cursors go with the user.
 */
export const threadsProjection: ProjectionDefinition<Folded, ThreadsDocument> = {
  name: 'threads',
  // 2: replies sent under a shadow ban are kept (for their sender's pages).
  version: 2,
  collections: [
    { name: THREAD_REPLIES, indexes: [{ fields: ['instance_id', 'room_id', 'parent_id', 'visible', 'id'] }] },
    { name: THREADS, indexes: [{ fields: ['instance_id', 'room_id'] }] },
    { name: THREAD_MEMBERS, indexes: [{ fields: ['instance_id', 'user_id', 'last_reply_id'] }, { fields: ['instance_id', 'room_id', 'parent_id'] }] },
    { name: THREAD_CURSORS, indexes: [{ fields: ['instance_id', 'user_id'] }, { fields: ['instance_id', 'room_id'] }] },
  ],
  handles: ['MessageSent', 'MessageEdited', 'MessageDeleted', 'ThreadReadCursorSet', 'RoomDeleted', 'UserDeleted'],
  destroys: ['MessageEdited', 'MessageDeleted', 'RoomDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    const instanceId = stream.instanceId;
    switch (event.type) {
      case 'MessageSent': {
        const { parent_id, parent_user_id, user_id, id } = event.data;
        if (parent_id === undefined) return []; // no reply: in no thread
        const roomId = stream.id;
        // The summary and the threads lists are everyone's: a reply not shown to everyone (sent
        // under a shadow ban) is kept for its sender's pages alone, counted nowhere.
        if (!shownTo(event.data, undefined)) return [{ collection: THREAD_REPLIES, id: threadReplyDocumentId(instanceId, roomId, id) }];
        return [
          // The members already in the thread first: a selection reads what the batch wrote so far.
          { collection: THREAD_MEMBERS, where: { instance_id: instanceId, room_id: roomId, parent_id } },
          { collection: THREAD_MEMBERS, id: threadMemberDocumentId(instanceId, user_id, roomId, parent_id) },
          ...(parent_user_id !== undefined && parent_user_id !== user_id
            ? [{ collection: THREAD_MEMBERS, id: threadMemberDocumentId(instanceId, parent_user_id, roomId, parent_id) }]
            : []),
          { collection: THREADS, id: threadDocumentId(instanceId, roomId, parent_id) },
          { collection: THREAD_REPLIES, id: threadReplyDocumentId(instanceId, roomId, id) },
        ];
      }
      case 'MessageEdited':
      case 'MessageDeleted': {
        const { parent_id, id } = event.data;
        if (parent_id === undefined) return [];
        const roomId = event.data.room_id ?? stream.id;
        return [
          { collection: THREAD_REPLIES, id: threadReplyDocumentId(instanceId, roomId, id) },
          ...(event.type === 'MessageDeleted' && shownTo(event.data, undefined) ? [{ collection: THREADS, id: threadDocumentId(instanceId, roomId, parent_id) }] : []),
        ];
      }
      case 'ThreadReadCursorSet': {
        const { room_id, parent_id, user_id } = event.data;
        return [{ collection: THREAD_CURSORS, id: threadCursorDocumentId(instanceId, room_id, parent_id, user_id) }];
      }
      case 'RoomDeleted':
        if (stream.category !== 'room') return [];
        return [THREAD_REPLIES, THREADS, THREAD_MEMBERS, THREAD_CURSORS].map((collection) => ({ collection, where: { instance_id: instanceId, room_id: stream.id } }));
      case 'UserDeleted':
        if (stream.category !== 'user') return [];
        return [THREAD_MEMBERS, THREAD_CURSORS].map((collection) => ({ collection, where: { instance_id: instanceId, user_id: stream.id } }));
      default:
        return [];
    }
  },

  evolve(doc, event, target) {
    switch (event.type) {
      case 'MessageSent':
        return replySent(doc, event as Parameters<typeof messageDocumentFrom>[0], target);
      case 'MessageEdited':
      case 'MessageDeleted':
        if (target.collection === THREADS) {
          const thread = doc as ThreadDocument | null;
          return thread && { ...thread, reply_count: Math.max(0, thread.reply_count - 1) };
        }
        return messagesProjection.evolve(doc as ThreadReplyDocument | null, event, target) as ThreadReplyDocument | null;
      case 'ThreadReadCursorSet': {
        const { room_id, parent_id, user_id, position, updated_at } = event.data;
        return { _id: target.id, instance_id: parseStreamName(event.streamName)!.instanceId, room_id, parent_id, user_id, position, updated_at };
      }
      default:
        return null;
    }
  },
};

function replySent(doc: ThreadsDocument | null, event: Parameters<typeof messageDocumentFrom>[0], target: DocumentRef): ThreadsDocument {
  const { id, user_id, parent_id, parent_user_id, created_at, also_in_room } = event.data;
  const parentId = parent_id!;
  const instanceId = parseStreamName(event.streamName)!.instanceId;
  const roomId = parseStreamName(event.streamName)!.id;
  switch (target.collection) {
    case THREAD_REPLIES:
      return { ...messageDocumentFrom(event), _id: target.id, parent_id: parentId, ...(also_in_room && { also_in_room }) };
    case THREADS: {
      const thread = doc as ThreadDocument | null;
      const known = thread?.participants ?? (parent_user_id !== undefined ? [parent_user_id] : []);
      const participants = known.includes(user_id) || known.length >= MAX_THREAD_PARTICIPANTS ? known : [...known, user_id];
      return {
        _id: target.id,
        instance_id: instanceId,
        room_id: roomId,
        parent_id: parentId,
        reply_count: (thread?.reply_count ?? 0) + 1,
        last_reply_id: id,
        last_reply_at: created_at,
        participants,
      };
    }
    default: {
      // A member's document: created for the replier and the starter, moved to the newest reply for everyone in the thread.
      const member = doc as ThreadMemberDocument | null;
      const userId = member?.user_id ?? (target.id === threadMemberDocumentId(instanceId, user_id, roomId, parentId) ? user_id : parent_user_id!);
      return { _id: target.id, instance_id: instanceId, user_id: userId, room_id: roomId, parent_id: parentId, last_reply_id: id, last_reply_at: created_at };
    }
  }
}
