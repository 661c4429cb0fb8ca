import { Controller, Delete, HttpCode, Inject, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { messageDecider, messageNotFound, messageStream } from '../domain/message.decider';
import { MESSAGE_READS, MessagesReadModel } from '../messages.read-model';
import { SentMessages } from '../sent-messages';
import { parseMessageId } from '../presentation/message-id.pipe';
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
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, messageId, tombstone, requester, actor }: DeleteMessageCommand): Promise<void> {
    const room = await this.access.readable(instanceId, roomId, requester);
    const sent = await this.sentMessages.find(instanceId, roomId, messageId);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      messageStream(instanceId, messageId),
      messageDecider,
      {
        type: 'DeleteMessage',
        id: messageId,
        roomId,
        sent,
        roomCreatedAt: room.createdAt,
        actor: { userId: requester.userId, su: requester.su },
        tombstone,
        now,
      },
      { instance_id: instanceId, actor, occurred_at: now },
      { awaitProjections: MESSAGE_READS },
    );
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
