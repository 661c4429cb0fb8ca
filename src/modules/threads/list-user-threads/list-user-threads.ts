import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { parseLimit } from '../../../shared/http/query-params';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { MessageResponse, presentMessage } from '../../messages/presentation/message.presenter';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { summaryOf, ThreadSummary, ThreadsReadModel } from '../threads.read-model';

export class ListUserThreadsQuery {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    readonly before: number | undefined,
    readonly limit: number,
  ) {}
}

export interface UserThread extends ThreadSummary {
  readonly room_id: string;
  readonly parent_id: number;
  readonly last_reply_id: number;
  /** Replies after the user's read cursor in the thread (all of them without one). */
  readonly unread_count: number;
  /** The thread's first message as v6 shows it; absent once deleted (its replies stay theirs). */
  readonly parent?: MessageResponse;
}

export interface UserThreadsPage {
  readonly threads: UserThread[];
  /** Pass as `before` for the next page; absent on the last one. */
  readonly next?: string;
}

/**
 * The threads a user started or replied in, in the rooms they are a member of now, newest
 * activity first, each with its summary and the user's unread count in it.
 */
@QueryHandler(ListUserThreadsQuery)
export class ListUserThreadsHandler implements IQueryHandler<ListUserThreadsQuery, UserThreadsPage> {
  constructor(
    private readonly threads: ThreadsReadModel,
    private readonly rooms: RoomsReadModel,
    private readonly messages: MessagesReadModel,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  async execute(q: ListUserThreadsQuery): Promise<UserThreadsPage> {
    const roomIds = (await this.rooms.roomsOf(q.instanceId, q.userId)).map((r) => r.id);
    const found = await this.threads.memberships(q.instanceId, q.userId, roomIds, q.before, q.limit + 1);
    const page = found.slice(0, q.limit);
    const cursors = await this.threads.cursors(q.instanceId, q.userId, page);
    const threads = await Promise.all(
      page.map(async (m): Promise<UserThread | null> => {
        const [thread, parent, unread] = await Promise.all([
          this.threads.thread(q.instanceId, m.room_id, m.parent_id),
          this.messages.get(q.instanceId, m.room_id, m.parent_id),
          this.threads.unread(q.instanceId, m.room_id, m.parent_id, cursors.get(m.parent_id)),
        ]);
        if (!thread) return null;
        return {
          room_id: m.room_id,
          parent_id: m.parent_id,
          last_reply_id: thread.last_reply_id,
          ...summaryOf(thread),
          unread_count: unread,
          ...(parent && parent.deleted_at === undefined && { parent: presentMessage(6, parent, this.attachments) }),
        };
      }),
    );
    return {
      threads: threads.filter((t): t is UserThread => t !== null),
      ...(found.length > q.limit && { next: String(page[page.length - 1].last_reply_id) }),
    };
  }
}

/** `GET …/users/:userId/threads?before=&limit=` (1–100, 20): the user themselves or su. */
@Controller(CHATKIT_V6_ROUTE)
export class ListUserThreadsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users/:userId/threads')
  @Requires(Access.selfOrSu('userId'))
  list(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Query() query: Record<string, unknown>): Promise<UserThreadsPage> {
    let before: number | undefined;
    if (query.before !== undefined && query.before !== '') {
      before = Number(query.before);
      if (!Number.isSafeInteger(before) || before < 0) throw unprocessable('invalid_before', 'before must be a next value a previous page answered');
    }
    const limit = parseLimit(query.limit, { fallback: 20, max: 100 });
    return this.queries.execute(new ListUserThreadsQuery(instanceId, userId, before, limit));
  }
}
