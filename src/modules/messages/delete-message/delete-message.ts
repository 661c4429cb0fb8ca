import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { messageNotFound } from '../domain/message.decider';
import { MessagesReadModel } from '../messages.read-model';
import { parseMessageId } from '../presentation/message-id.pipe';
import { MessageChanges } from '../message-changes';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class DeleteMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly messageId: number,
    /** The seed's v2 route leaves a tombstone (text DELETED); v6 removes the message from fetches. */
    readonly tombstone: boolean,
    readonly requester: RequestActor,
    readonly actor: Actor,
  ) {}
}

/** Deletes a message: its content leaves every read model, and subscribers are told. */
@CommandHandler(DeleteMessageCommand)
export class DeleteMessageHandler implements ICommandHandler<DeleteMessageCommand, void> {
  constructor(private readonly changes: MessageChanges) {}

  execute({ instanceId, roomId, messageId, tombstone, requester, actor }: DeleteMessageCommand): Promise<void> {
    return this.changes.apply(instanceId, roomId, messageId, { type: 'DeleteMessage', tombstone }, requester, actor);
  }
}

@Controller(CHATKIT_ROUTE)
export class DeleteMessageController {
  constructor(
    private readonly commands: CommandBus,
    private readonly messages: MessagesReadModel,
  ) {}

  /** Seed (v2): `DELETE /messages/:id` with an su token; the room is found from the id. */
  @Delete('messages/:messageId')
  @Requires(Access.su)
  @HttpCode(204)
  async deleteById(
    @Param('instanceId') instanceId: string,
    @Param('messageId') rawId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const messageId = parseMessageId(rawId);
    const message = await this.messages.findById(instanceId, messageId);
    if (!message || message.deleted_at) throw messageNotFound(messageId);
    await this.commands.execute(
      new DeleteMessageCommand(instanceId, message.room_id, messageId, true, actor, auditActor(actor)),
    );
  }

  /** chatkit-server's deleteMessage (v6): the sender or su. */
  @Delete('rooms/:roomId/messages/:messageId')
  @Requires(Access.authenticated)
  @HttpCode(204)
  async deleteInRoom(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(
      new DeleteMessageCommand(instanceId, roomId, parseMessageId(rawId), false, actor, auditActor(actor)),
    );
  }
}
