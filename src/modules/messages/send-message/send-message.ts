import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { messagesStream, timelineDecider } from '../domain/message.decider';
import { SendMessageCommand } from '../send-message-command';
import { MessageId, MessageSent } from '../domain/message.events';
import { MessageContent } from '../message-content';
import { MessageIds } from '../message-ids';
import { MESSAGE_READS } from '../messages.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { ShadowBanned } from '../../bans/shadow-banned.decorator';

export { SendMessageCommand };

@CommandHandler(SendMessageCommand)
export class SendMessageHandler implements ICommandHandler<SendMessageCommand, MessageId> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly ids: MessageIds,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userId, parts, actor, su, thread, awaitAlso, shadow }: SendMessageCommand): Promise<MessageId> {
    const sender = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!sender.state.exists) throw userNotFound(userId);
    const room = await this.access.writableAs(instanceId, roomId, userId, su);
    // The id is taken above the timeline's last; another process sending to the room first makes
    // it outdated, and the pipeline builds the message again with a new id (bounded, then 409).
    const { events } = await this.pipeline.buildAndRun(
      messagesStream(instanceId, roomId),
      timelineDecider,
      async (timeline) => {
        const id = await this.ids.next(instanceId, timeline.lastId);
        const now = this.clock.now().toISOString();
        return {
          command: {
            type: 'SendMessage' as const,
            id,
            userId,
            userCreatedAt: sender.state.createdAt!,
            parts,
            roomCreatedAt: room.createdAt,
            now,
            ...(thread && { thread }),
            ...(shadow && { shadow }),
          },
          metadata: { instance_id: instanceId, actor, occurred_at: now },
        };
      },
      // Readers of messages wait for them where this process folds them (MessagesReadModel): the answer need not.
      { awaitProjections: awaitAlso.length ? [...MESSAGE_READS, ...awaitAlso] : MESSAGE_READS, readersWait: MESSAGE_READS },
    );
    return events.find((event): event is MessageSent => event.type === 'MessageSent')!.data.id;
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
    @ShadowBanned() shadow: boolean,
  ): Promise<{ message_id: MessageId }> {
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) to send the message as');
    const parts = await this.content.parse(version, instanceId, roomId, body);
    const id: MessageId = await this.commands.execute(
      new SendMessageCommand(instanceId, roomId, actor.userId, parts, auditActor(actor), actor.su, undefined, [], shadow),
    );
    return { message_id: id };
  }
}
