import { Body, Controller, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagePart } from '../domain/message-parts';
import { MessageContent } from '../message-content';
import { parseMessageId } from '../presentation/message-id.pipe';
import { MessageChanges } from '../message-changes';
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
  constructor(private readonly changes: MessageChanges) {}

  execute({ instanceId, roomId, messageId, parts, requester, actor }: EditMessageCommand): Promise<void> {
    return this.changes.apply(instanceId, roomId, messageId, { type: 'EditMessage', parts }, requester, actor);
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
