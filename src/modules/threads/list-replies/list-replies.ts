import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { parseLimit } from '../../../shared/http/query-params';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { MessageResponse, presentMessage } from '../../messages/presentation/message.presenter';
import { ReactionsReadModel, withReactions } from '../../messages/reactions.read-model';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parentIsReply, parentNotFound } from '../thread-errors';
import { messageOrReply, ThreadsReadModel } from '../threads.read-model';
import { Restrictions } from '../../bans/restrictions';

export class ListRepliesQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly parentId: number,
    readonly initialId: number | undefined,
    readonly direction: 'older' | 'newer',
    readonly limit: number,
    readonly actor: RequestActor,
  ) {}
}

@QueryHandler(ListRepliesQuery)
export class ListRepliesHandler implements IQueryHandler<ListRepliesQuery, MessageResponse[]> {
  constructor(
    private readonly access: RoomAccess,
    private readonly threads: ThreadsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly reactions: ReactionsReadModel,
    private readonly restrictions: Restrictions,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  async execute(q: ListRepliesQuery): Promise<MessageResponse[]> {
    await this.access.readable(q.instanceId, q.roomId, q.actor);
    // A message without replies has an empty thread; a thread outlives its first message's deletion (its replies are their senders').
    const viewer = await this.restrictions.shadowViewer(q.actor, q.roomId);
    const [thread, parent] = await Promise.all([
      this.threads.thread(q.instanceId, q.roomId, q.parentId),
      messageOrReply(this.messages, this.threads, q.instanceId, q.roomId, q.parentId, viewer),
    ]);
    if (!thread && !parent) throw parentNotFound(q.parentId, q.roomId);
    if (parent?.parent_id !== undefined) throw parentIsReply(q.parentId, parent.parent_id);
    // Read even without a summary: a thread whose replies are all deleted still shows the tombstones
    // some deletes leave, and one with only the viewer's replies sent under a shadow ban has none (it is no one else's).
    const docs = await this.threads.replies(q.instanceId, q.roomId, q.parentId, { ...q, ...(viewer !== undefined && { viewer }) });
    const shown = docs.map((d) => presentMessage(6, d, this.attachments));
    return withReactions(this.reactions, 6, q.instanceId, shown, q.actor.userId, viewer);
  }
}

/** A thread's replies, paged as a room's messages: `initial_id` exclusive, `direction` older (default, newest first) or newer, `limit` 1–100 (20). */
@Controller(CHATKIT_V6_ROUTE)
export class ListRepliesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/messages/:messageId/replies')
  @Requires(Access.permission('room:messages:get', { room: 'roomId' }))
  list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<MessageResponse[]> {
    const parentId = parseMessageId(rawId);
    let initialId: number | undefined;
    if (query.initial_id !== undefined && query.initial_id !== '') {
      initialId = Number(query.initial_id);
      if (!Number.isSafeInteger(initialId) || initialId < 0) throw unprocessable('invalid_initial_id', 'initial_id must be a message id (a whole number)');
    }
    const direction = query.direction === undefined || query.direction === '' ? 'older' : query.direction;
    if (direction !== 'older' && direction !== 'newer') throw unprocessable('invalid_direction', 'direction must be older or newer');
    const limit = parseLimit(query.limit, { fallback: 20, max: 100 });
    return this.queries.execute(new ListRepliesQuery(instanceId, roomId, parentId, initialId, direction, limit, actor));
  }
}
