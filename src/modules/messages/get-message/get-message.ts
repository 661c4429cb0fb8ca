import { Controller, Get, Inject, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { messageNotFound } from '../domain/message.decider';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../presentation/attachments.port';
import { MessageResponse, presentMessage } from '../presentation/message.presenter';
import { MessagesReadModel } from '../messages.read-model';
import { ReactionsReadModel, withReactions } from '../reactions.read-model';
import { messageOrReply, ThreadsReadModel, withThreads } from '../../threads/threads.read-model';
import { parseMessageId } from '../presentation/message-id.pipe';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Restrictions } from '../../bans/restrictions';

export class GetMessageQuery {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly roomId: string,
    readonly messageId: number,
    readonly actor: RequestActor,
  ) {}
}

@QueryHandler(GetMessageQuery)
export class GetMessageHandler implements IQueryHandler<GetMessageQuery, MessageResponse> {
  constructor(
    private readonly access: RoomAccess,
    private readonly messages: MessagesReadModel,
    private readonly reactions: ReactionsReadModel,
    private readonly threads: ThreadsReadModel,
    private readonly restrictions: Restrictions,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  async execute(q: GetMessageQuery): Promise<MessageResponse> {
    await this.access.readable(q.instanceId, q.roomId, q.actor);
    // v6 also finds a reply shown in its thread alone (docs/api.md, Threads); v2 shows the room's messages only.
    const viewer = await this.restrictions.shadowViewer(q.actor, q.roomId);
    const doc =
      q.version === 6
        ? await messageOrReply(this.messages, this.threads, q.instanceId, q.roomId, q.messageId, viewer)
        : await this.messages.get(q.instanceId, q.roomId, q.messageId, viewer);
    if (!doc) throw messageNotFound(q.messageId);
    const summarized = await withThreads(this.threads, q.version, q.instanceId, q.roomId, [presentMessage(q.version, doc, this.attachments)], viewer);
    const [shown] = await withReactions(this.reactions, q.version, q.instanceId, summarized, q.actor.userId, viewer);
    return shown;
  }
}

@Controller(CHATKIT_ROUTE)
export class GetMessageController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/messages/:messageId')
  @Requires(Access.permission('room:messages:get', { room: 'roomId' }))
  get(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @Param('messageId') messageId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<MessageResponse> {
    return this.queries.execute(new GetMessageQuery(instanceId, version, roomId, parseMessageId(messageId), actor));
  }
}
