import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { MessagePart } from '../domain/message-parts';
import { messageDecider, messageStream } from '../domain/message.decider';
import { MessageContent } from '../message-content';
import { MESSAGE_READS } from '../messages.read-model';
import { SentMessages } from '../sent-messages';
import { parseMessageId } from '../presentation/message-id.pipe';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class EditMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly messageId: number,
    readonly parts: MessagePart[],
    readonly requester: RequestActor,
    readonly actor: Actor,
  ) {}
}

/** Replaces a message's content; only its sender or su may. */
@CommandHandler(EditMessageCommand)
export class EditMessageHandler implements ICommandHandler<EditMessageCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, messageId, parts, requester, actor }: EditMessageCommand): Promise<void> {
    const room = await this.access.readable(instanceId, roomId, requester);
    const sent = await this.sentMessages.find(instanceId, roomId, messageId);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      messageStream(instanceId, messageId),
      messageDecider,
      {
        type: 'EditMessage',
        id: messageId,
        roomId,
        sent,
        roomCreatedAt: room.createdAt,
        actor: { userId: requester.userId, su: requester.su },
        parts,
        now,
      },
      { instance_id: instanceId, actor, occurred_at: now },
      { awaitProjections: MESSAGE_READS },
    );
  }
}

/** v2 takes `{text, attachment?}`, v6 `{parts}` (wire study §2.2: editMessage and editMultipartMessage). */
@Controller(CHATKIT_ROUTE)
export class EditMessageController {
  constructor(
    private readonly commands: CommandBus,
    private readonly content: MessageContent,
  ) {}

  @Put('rooms/:roomId/messages/:messageId')
  @Requires(Access.permission('message:create', { room: 'roomId' }))
  @HttpCode(204)
  async edit(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const messageId = parseMessageId(rawId);
    const parts = await this.content.parse(version, instanceId, roomId, body);
    await this.commands.execute(new EditMessageCommand(instanceId, roomId, messageId, parts, actor, auditActor(actor)));
  }
}
