import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import type { MessageDocument } from '../../../projections/messages/messages.projection';
import type { MessagesReadModel } from '../messages/messages.read-model';
import { pageShownTo, shownToViewer } from '../messages/messages.read-model';
import { MODERATOR, Viewer } from '../messages/domain/message-visibility';
import {
  THREAD_CURSORS,
  THREAD_MEMBERS,
  THREAD_REPLIES,
  ThreadCursorDocument,
  threadCursorDocumentId,
  ThreadDocument,
  threadDocumentId,
  ThreadMemberDocument,
  ThreadReplyDocument,
  threadReplyDocumentId,
  THREADS,
  threadsProjection,
  MAX_THREAD_PARTICIPANTS,
} from '../../../projections/threads/threads.projection';

/** A reply, a thread cursor: answered once the threads read model shows it. */
export const THREAD_READS: readonly string[] = [checkpointName(threadsProjection)];

/** What a thread's first message shows of its thread (an additive field of v6 messages). */
export interface ThreadSummary {
  readonly reply_count: number;
  readonly last_reply_at: string;
  /** The starter, then repliers in the order they first replied; at most MAX_THREAD_PARTICIPANTS. */
  readonly participants: readonly string[];
  /** A moderator's summary only (the console): how many of `reply_count` were sent under a shadow ban. */
  readonly shadow_reply_count?: number;
}

export const summaryOf = ({ reply_count, last_reply_at, participants }: ThreadDocument): ThreadSummary => ({ reply_count, last_reply_at, participants });

/**
 * v6 messages as answered, each thread's first message with `thread` (an additive field, as
 * `reactions` is: the original SDKs ignore fields they do not know). v2 shows none. `viewer`: a
 * shadow-banned caller, whose own replies sent under the ban count in the summaries they see
 * (as their reactions do), so that they find their replies as anyone finds theirs.
 */
export async function withThreads<M extends Record<string, unknown>>(
  threads: ThreadsReadModel,
  version: number,
  instanceId: string,
  roomId: string,
  messages: M[],
  viewer?: string,
): Promise<M[]> {
  if (version !== 6 || messages.length === 0) return messages;
  const found = await summariesShownTo(threads, instanceId, roomId, messages.map((m) => ({ id: m.id as number, user_id: m.user_id as string })), viewer);
  if (found.size === 0) return messages;
  return messages.map((m) => {
    const thread = found.get(m.id as number);
    return thread ? { ...m, thread } : m;
  });
}

/**
 * The thread summaries of these messages (those that have a thread) as `viewer` sees them:
 * everyone's, with the replies sent under a shadow ban that the viewer may see counted in (a
 * user's own; a moderator's: everyone's, with how many of them in `shadow_reply_count`).
 */
export async function summariesShownTo(
  threads: ThreadsReadModel,
  instanceId: string,
  roomId: string,
  messages: readonly { id: number; user_id: string }[],
  viewer: Viewer,
): Promise<Map<number, ThreadSummary>> {
  const ids = messages.map((m) => m.id);
  const found = new Map([...(await threads.summaries(instanceId, roomId, ids))].map(([id, doc]) => [id, summaryOf(doc)]));
  if (viewer === undefined) return found;
  for (const reply of await threads.shadowRepliesShownTo(instanceId, roomId, ids, viewer)) {
    const parentUser = messages.find((m) => m.id === reply.parent_id)?.user_id;
    found.set(reply.parent_id, withShadowReply(found.get(reply.parent_id), reply, parentUser, viewer === MODERATOR));
  }
  return found;
}

/**
 * A message of the room by its id as v6 finds it: one of the room's timeline (with `viewer`, a
 * shadow-banned user's own too) or a reply shown in its thread alone (docs/api.md, Threads).
 */
export async function messageOrReply(
  messages: MessagesReadModel,
  threads: ThreadsReadModel,
  instanceId: string,
  roomId: string,
  messageId: number,
  viewer?: Viewer,
): Promise<MessageDocument | null> {
  return (await messages.get(instanceId, roomId, messageId, viewer)) ?? (await threads.reply(instanceId, roomId, messageId, viewer));
}
/**
 * A summary with one more reply sent under a shadow ban, as its sender sees it, or a moderator
 * (`forModerator`), who is also told how many such replies it counts.
 */
const withShadowReply = (summary: ThreadSummary | undefined, reply: ThreadReplyDocument, parentUser: string | undefined, forModerator: boolean): ThreadSummary => {
  const known = summary?.participants ?? (parentUser !== undefined ? [parentUser] : []);
  return {
    reply_count: (summary?.reply_count ?? 0) + 1,
    last_reply_at: summary && summary.last_reply_at > reply.created_at ? summary.last_reply_at : reply.created_at,
    participants: known.includes(reply.user_id) || known.length >= MAX_THREAD_PARTICIPANTS ? known : [...known, reply.user_id],
    ...(forModerator && { shadow_reply_count: (summary?.shadow_reply_count ?? 0) + 1 }),
  };
};

@Injectable()
export class ThreadsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** A reply not deleted, shown to everyone or (with `viewer`, a shadow-banned user) sent by them under the ban (a moderator: by anyone). */
  async reply(instanceId: string, roomId: string, messageId: number, viewer?: Viewer): Promise<ThreadReplyDocument | null> {
    const doc = await this.readModels.get<ThreadReplyDocument>(THREAD_REPLIES, threadReplyDocumentId(instanceId, roomId, messageId));
    return doc && shownToViewer(doc, viewer) && doc.deleted_at === undefined ? doc : null;
  }

  /** A reply as stored, shown or not (a live subscription's deletes tell apart whose shadow reply it was). */
  stored(instanceId: string, roomId: string, messageId: number): Promise<ThreadReplyDocument | null> {
    return this.readModels.get<ThreadReplyDocument>(THREAD_REPLIES, threadReplyDocumentId(instanceId, roomId, messageId));
  }

  thread(instanceId: string, roomId: string, parentId: number): Promise<ThreadDocument | null> {
    return this.readModels.get<ThreadDocument>(THREADS, threadDocumentId(instanceId, roomId, parentId));
  }

  /**
   * The replies sent under a shadow ban (not deleted) in the threads of these messages that the
   * viewer may see (a user: their own; a moderator: everyone's), oldest first.
   */
  async shadowRepliesShownTo(instanceId: string, roomId: string, parentIds: readonly number[], viewer: Exclude<Viewer, undefined>): Promise<ThreadReplyDocument[]> {
    const docs = await this.readModels.find<ThreadReplyDocument>(THREAD_REPLIES, {
      where: { instance_id: instanceId, room_id: roomId, parent_id: { in: [...parentIds] }, visible: false, ...(typeof viewer === 'string' && { user_id: viewer }), shadow: true },
    });
    // Each thread's rows come in id order off the index; ordered across threads here, not by a sort of the store's over the whole `in` list.
    return docs.filter((doc) => shownToViewer(doc, viewer)).sort((a, b) => a.id - b.id);
  }

  /** The threads of these messages that have one, by parent id. */
  async summaries(instanceId: string, roomId: string, messageIds: readonly number[]): Promise<Map<number, ThreadDocument>> {
    const docs = await this.readModels.getMany<ThreadDocument>(THREADS, messageIds.map((id) => threadDocumentId(instanceId, roomId, id)));
    return new Map(docs.map((d) => [d.parent_id, d]));
  }

  /**
   * A thread's replies as a room's messages page: older (default) newest first below
   * `initialId`, newer oldest first above it; with `viewer` (a shadow-banned user), their own
   * replies sent under the ban too (a moderator: everyone's).
   */
  replies(
    instanceId: string,
    roomId: string,
    parentId: number,
    options: { initialId?: number; direction: 'older' | 'newer'; limit: number; viewer?: Viewer },
  ): Promise<ThreadReplyDocument[]> {
    const older = options.direction === 'older';
    const query = (where: Record<string, string | boolean>) =>
      this.readModels.find<ThreadReplyDocument>(THREAD_REPLIES, {
        where: {
          instance_id: instanceId,
          room_id: roomId,
          parent_id: parentId,
          ...where,
          ...(options.initialId !== undefined && { id: older ? { lt: options.initialId } : { gt: options.initialId } }),
        },
        sort: [{ field: 'id', descending: older }],
        limit: options.limit,
      });
    return pageShownTo(query, options);
  }

  /** The user's threads in these rooms, newest activity first, below `before` (a `last_reply_id`). */
  memberships(instanceId: string, userId: string, roomIds: readonly string[], before: number | undefined, limit: number): Promise<ThreadMemberDocument[]> {
    if (roomIds.length === 0) return Promise.resolve([]);
    return this.readModels.find<ThreadMemberDocument>(THREAD_MEMBERS, {
      where: {
        instance_id: instanceId,
        user_id: userId,
        room_id: { in: [...roomIds] },
        ...(before !== undefined && { last_reply_id: { lt: before } }),
      },
      sort: [{ field: 'last_reply_id', descending: true }],
      limit,
    });
  }

  cursor(instanceId: string, roomId: string, parentId: number, userId: string): Promise<ThreadCursorDocument | null> {
    return this.readModels.get<ThreadCursorDocument>(THREAD_CURSORS, threadCursorDocumentId(instanceId, roomId, parentId, userId));
  }

  /** The user's cursors in these threads, by parent id. */
  async cursors(instanceId: string, userId: string, threads: readonly { room_id: string; parent_id: number }[]): Promise<Map<number, number>> {
    const ids = threads.map((t) => threadCursorDocumentId(instanceId, t.room_id, t.parent_id, userId));
    const docs = await this.readModels.getMany<ThreadCursorDocument>(THREAD_CURSORS, ids);
    return new Map(docs.map((d) => [d.parent_id, d.position]));
  }

  /**
   * Replies after the cursor (all without one), found on the replies' index (room, thread, id).
   * A deleted reply shown as a tombstone (the v2 route's delete, an erasure) is not counted, as
   * the thread's `reply_count` does not count it.
   */
  unread(instanceId: string, roomId: string, parentId: number, position: number | undefined): Promise<number> {
    return this.readModels.count(THREAD_REPLIES, {
      instance_id: instanceId,
      room_id: roomId,
      parent_id: parentId,
      visible: true,
      deleted_at: null,
      id: { gt: position ?? 0 },
    });
  }
}
