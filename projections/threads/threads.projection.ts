import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageEvent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { ThreadEvent } from '../../src/modules/threads/domain/thread.events';
import type { Document, DocumentRef, ProjectionDefinition, Target } from '../projection';
import { MESSAGE_COLUMNS, MessageDocument, messageDocumentFrom, messagesProjection } from '../messages/messages.projection';
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
  /** The newest reply not deleted. */
  readonly last_reply_id: number;
  readonly last_reply_at: string;
  /** `starter_id`, then `repliers` in order, at most MAX_THREAD_PARTICIPANTS: what the summary shows. */
  readonly participants: readonly string[];
  /** Who started the thread (the parent's sender), when the replies name it. */
  readonly starter_id?: string;
  /**
   * Everyone with a reply not deleted, in the order they joined the thread, with how many they
   * have: a reply's deletion then knows whether its sender is still in the thread, and who
   * comes next in `participants`, without reading the replies. It grows with the thread's
   * participants, not with its replies.
   */
  readonly repliers: readonly Replier[];
}

export interface Replier {
  readonly user_id: string;
  readonly replies: number;
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
  // 2: summaries hold their repliers, so a reply's deletion leaves what the remaining replies say;
  // replies sent under a shadow ban are kept (for their sender's pages).
  version: 2,
  collections: [
    // (instance_id, id): the audit API finds a thread-only reply's room by its id alone, as the messages' own index does for the room's messages.
    {
      name: THREAD_REPLIES,
      indexes: [{ fields: ['instance_id', 'room_id', 'parent_id', 'visible', 'id'] }, { fields: ['instance_id', 'id'] }],
      // A message's columns, and whether the reply is also shown in the room (before a deletion's fields, as written).
      columns: [...MESSAGE_COLUMNS.slice(0, -2), { name: 'also_in_room', type: 'boolean' }, ...MESSAGE_COLUMNS.slice(-2)],
    },
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
        if (event.data.parent_id === undefined) return [];
        return [{ collection: THREAD_REPLIES, id: threadReplyDocumentId(instanceId, event.data.room_id ?? stream.id, event.data.id) }];
      case 'MessageDeleted': {
        const { parent_id, id } = event.data;
        if (parent_id === undefined) return [];
        const roomId = event.data.room_id ?? stream.id;
        const thread = { instance_id: instanceId, room_id: roomId, parent_id };
        // In this order: each read sees what the targets before it folded (the reply deleted, then the summary).
        return [
          { collection: THREAD_REPLIES, id: threadReplyDocumentId(instanceId, roomId, id) },
          // A reply sent under a shadow ban was counted nowhere: its deletion leaves the summary and the members as they are.
          ...(shownTo(event.data, undefined)
            ? [
                {
                  collection: THREADS,
                  id: threadDocumentId(instanceId, roomId, parent_id),
                  reads: [
                    // Whose reply it was: the deletion does not say.
                    { collection: THREAD_REPLIES, where: { ...thread, id }, limit: 1 },
                    // The thread's newest reply left, should this one have been the newest (one shown to everyone).
                    {
                      collection: THREAD_REPLIES,
                      where: { ...thread, visible: true, deleted_at: null, shadow: null },
                      sort: [{ field: 'id', descending: true }],
                      limit: 1,
                    },
                  ],
                },
                // Every member moves to the thread's newest reply left; one with no reply left (not its starter) leaves it.
                { collection: THREAD_MEMBERS, where: thread, reads: [{ collection: THREADS, where: { ...thread }, limit: 1 }] },
              ]
            : []),
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

  evolve(doc, event, target, read = []) {
    switch (event.type) {
      case 'MessageSent':
        return replySent(doc, event as Parameters<typeof messageDocumentFrom>[0], target);
      case 'MessageDeleted':
        if (target.collection === THREADS) return replyDeleted(doc as ThreadDocument | null, read);
        if (target.collection === THREAD_MEMBERS) return memberAfterDelete(doc as ThreadMemberDocument | null, read);
        return messagesProjection.evolve(doc as ThreadReplyDocument | null, event, target) as ThreadReplyDocument | null;
      case 'MessageEdited':
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
      const starterId = thread ? thread.starter_id : parent_user_id;
      const known = thread?.repliers ?? [];
      const repliers = known.some((r) => r.user_id === user_id)
        ? known.map((r) => (r.user_id === user_id ? { ...r, replies: r.replies + 1 } : r))
        : [...known, { user_id, replies: 1 }];
      return {
        _id: target.id,
        instance_id: instanceId,
        room_id: roomId,
        parent_id: parentId,
        reply_count: (thread?.reply_count ?? 0) + 1,
        last_reply_id: id,
        last_reply_at: created_at,
        participants: participantsOf(starterId, repliers),
        ...(starterId !== undefined && { starter_id: starterId }),
        repliers,
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

/** The starter, then the repliers in the order they joined, at most MAX_THREAD_PARTICIPANTS. */
const participantsOf = (starterId: string | undefined, repliers: readonly Replier[]): string[] => {
  const others = repliers.map((r) => r.user_id).filter((u) => u !== starterId);
  return (starterId === undefined ? others : [starterId, ...others]).slice(0, MAX_THREAD_PARTICIPANTS);
};

/**
 * The summary once a reply is deleted: what the replies left say. `read`: the deleted reply
 * (its sender), then the thread's newest reply left (if any). No reply left: no thread.
 */
function replyDeleted(thread: ThreadDocument | null, read: readonly (readonly Document[])[]): ThreadDocument | null {
  if (!thread) return null;
  const [[deleted], [newest]] = read as [ThreadReplyDocument[], ThreadReplyDocument[]];
  const reply_count = thread.reply_count - 1;
  if (reply_count <= 0 || !newest) return null;
  const repliers = thread.repliers
    .map((r) => (r.user_id === deleted?.user_id ? { ...r, replies: r.replies - 1 } : r))
    .filter((r) => r.replies > 0);
  return {
    ...thread,
    reply_count,
    last_reply_id: newest.id,
    last_reply_at: newest.created_at,
    participants: participantsOf(thread.starter_id, repliers),
    repliers,
  };
}

/** A member once a reply of their thread is deleted (`read`: the thread's summary, already folded): gone with the thread, or with their last reply. */
function memberAfterDelete(member: ThreadMemberDocument | null, read: readonly (readonly Document[])[]): ThreadMemberDocument | null {
  const [thread] = (read[0] ?? []) as ThreadDocument[];
  if (!member || !thread) return null;
  if (member.user_id !== thread.starter_id && !thread.repliers.some((r) => r.user_id === member.user_id)) return null;
  if (member.last_reply_id === thread.last_reply_id) return member;
  return { ...member, last_reply_id: thread.last_reply_id, last_reply_at: thread.last_reply_at };
}
