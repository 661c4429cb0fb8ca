import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { MessagePart } from '../domain/message-parts';
import { messagesStream, StaleMessageIdError, timelineDecider } from '../domain/message.decider';
import { MessageId } from '../domain/message.events';
import { MessageContent } from '../message-content';
import { MessageIds } from '../message-ids';
import { MESSAGE_READS } from '../messages.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class SendMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly parts: MessagePart[],
    readonly actor: Actor,
    readonly su: boolean,
  ) {}
}

@CommandHandler(SendMessageCommand)
export class SendMessageHandler implements ICommandHandler<SendMessageCommand, MessageId> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly ids: MessageIds,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userId, parts, actor, su }: SendMessageCommand): Promise<MessageId> {
    const sender = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!sender.state.exists) throw userNotFound(userId);
    const room = await this.access.writableAs(instanceId, roomId, userId, su);
    const stream = messagesStream(instanceId, roomId);
    for (;;) {
      const timeline = await this.pipeline.load(stream, timelineDecider);
      const id = await this.ids.next(instanceId, timeline.state.lastId);
      const now = this.clock.now().toISOString();
      try {
        await this.pipeline.run(
          stream,
          timelineDecider,
          { type: 'SendMessage', id, userId, userCreatedAt: sender.state.createdAt!, parts, roomCreatedAt: room.createdAt, now },
          { instance_id: instanceId, actor, occurred_at: now },
          { awaitProjections: MESSAGE_READS },
        );
        return id;
      } catch (error) {
        if (!(error instanceof StaleMessageIdError)) throw error; // another process sent to this room first
      }
    }
  }
}

/** v2 takes `{text, attachment?}`, v6 takes `{parts}`; both answer `{message_id}`. */
@Controller(CHATKIT_ROUTE)
export class SendMessageController {
  constructor(
    private readonly commands: CommandBus,
    private readonly content: MessageContent,
  ) {}

  @Post('rooms/:roomId/messages')
  @Requires(Access.permission('message:create', { room: 'roomId' }))
  @HttpCode(201)
  async send(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<{ message_id: MessageId }> {
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) to send the message as');
    const parts = await this.content.parse(version, instanceId, roomId, body);
    const id: MessageId = await this.commands.execute(
      new SendMessageCommand(instanceId, roomId, actor.userId, parts, auditActor(actor), actor.su),
    );
    return { message_id: id };
  }
}
