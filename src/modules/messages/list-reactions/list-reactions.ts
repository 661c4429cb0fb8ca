import { Controller, Get, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { messageNotFound } from '../domain/message.decider';
import { MessagesReadModel } from '../messages.read-model';
import { parseMessageId } from '../presentation/message-id.pipe';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { Reaction, ReactionsReadModel } from '../reactions.read-model';
import { Restrictions } from '../../bans/restrictions';
import { messageOrReply, ThreadsReadModel } from '../../threads/threads.read-model';

export const DEFAULT_REACTIONS_LIMIT = 50;
export const MAX_REACTIONS_LIMIT = 100;

export class ListReactionsQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly messageId: number,
    readonly type: string | undefined,
    readonly after: string | undefined,
    readonly limit: number,
    readonly actor: RequestActor,
  ) {}
}

export interface ReactionsPage {
  readonly reactions: Reaction[];
  readonly next?: string;
}

@QueryHandler(ListReactionsQuery)
export class ListReactionsHandler implements IQueryHandler<ListReactionsQuery, ReactionsPage> {
  constructor(
    private readonly access: RoomAccess,
    private readonly messages: MessagesReadModel,
    private readonly threads: ThreadsReadModel,
    private readonly reactions: ReactionsReadModel,
    private readonly restrictions: Restrictions,
  ) {}

  async execute(q: ListReactionsQuery): Promise<ReactionsPage> {
    await this.access.readable(q.instanceId, q.roomId, q.actor);
    const viewer = await this.restrictions.shadowViewer(q.actor, q.roomId);
    // A reply shown in its thread alone is reacted to as any message: its reactors are listed too.
    const message = await messageOrReply(this.messages, this.threads, q.instanceId, q.roomId, q.messageId, viewer);
    if (!message || message.deleted_at !== undefined) throw messageNotFound(q.messageId);
    return this.reactions.page(q.instanceId, q.messageId, { ...q, ...(viewer !== undefined && { viewer }) });
  }
}

/** Who reacted to a message, oldest first, page by page: `type` narrows to one reaction type, `after` is the `next` of the page before. */
@Controller(CHATKIT_V6_ROUTE)
export class ListReactionsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/messages/:messageId/reactions')
  @Requires(Access.permission('room:messages:get', { room: 'roomId' }))
  list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<ReactionsPage> {
    const messageId = parseMessageId(rawId);
    const type = optionalString(query.type, 'type');
    const after = optionalString(query.after, 'after');
    const limit = parseLimit(query.limit, { fallback: DEFAULT_REACTIONS_LIMIT, max: MAX_REACTIONS_LIMIT });
    return this.queries.execute(new ListReactionsQuery(instanceId, roomId, messageId, type, after, limit, actor));
  }
}

const optionalString = (raw: unknown, name: string): string | undefined => {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw unprocessable(`invalid_${name}`, `${name} is given once, as text`);
  return raw;
};
