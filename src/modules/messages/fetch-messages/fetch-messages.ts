import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { parseLimit } from '../../../shared/http/query-params';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../presentation/attachments.port';
import { MessageResponse, presentMessage } from '../presentation/message.presenter';
import { MessagesReadModel } from '../messages.read-model';
import { ReactionsReadModel, withReactions } from '../reactions.read-model';
import { ThreadsReadModel, withThreads } from '../../threads/threads.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Restrictions } from '../../bans/restrictions';

export class FetchMessagesQuery {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly roomId: string,
    readonly initialId: number | undefined,
    readonly direction: 'older' | 'newer',
    readonly limit: number,
    readonly actor: RequestActor,
  ) {}
}

@QueryHandler(FetchMessagesQuery)
export class FetchMessagesHandler implements IQueryHandler<FetchMessagesQuery, MessageResponse[]> {
  constructor(
    private readonly access: RoomAccess,
    private readonly messages: MessagesReadModel,
    private readonly reactions: ReactionsReadModel,
    private readonly threads: ThreadsReadModel,
    private readonly restrictions: Restrictions,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  async execute(q: FetchMessagesQuery): Promise<MessageResponse[]> {
    await this.access.readable(q.instanceId, q.roomId, q.actor);
    const viewer = await this.restrictions.shadowViewer(q.actor, q.roomId);
    const docs = await this.messages.page(q.instanceId, q.roomId, { ...q, ...(viewer !== undefined && { viewer }) });
    const shown = docs.map((d) => presentMessage(q.version, d, this.attachments));
    const withSummaries = await withThreads(this.threads, q.version, q.instanceId, q.roomId, shown, viewer);
    return withReactions(this.reactions, q.version, q.instanceId, withSummaries, q.actor.userId, viewer);
  }
}

/** A page of a room's messages: `initial_id` exclusive, `direction` older (default, newest first) or newer. */
@Controller(CHATKIT_ROUTE)
export class FetchMessagesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/messages')
  @Requires(Access.permission('room:messages:get', { room: 'roomId' }))
  fetch(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<MessageResponse[]> {
    let initialId: number | undefined;
    if (query.initial_id !== undefined && query.initial_id !== '') {
      initialId = Number(query.initial_id);
      if (!Number.isSafeInteger(initialId) || initialId < 0) {
        throw unprocessable('invalid_initial_id', 'initial_id must be a message id (a whole number)');
      }
    }
    const direction = query.direction === undefined || query.direction === '' ? 'older' : query.direction;
    if (direction !== 'older' && direction !== 'newer') {
      throw unprocessable('invalid_direction', 'direction must be older or newer');
    }
    const limit = parseLimit(query.limit, { fallback: 20, max: 100 });
    return this.queries.execute(new FetchMessagesQuery(instanceId, version, roomId, initialId, direction, limit, actor));
  }
}
