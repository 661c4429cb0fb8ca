import { Controller, Delete, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { Actor } from '../../../shared/domain/event';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { ShadowBanned } from '../../bans/shadow-banned.decorator';
import { messageDecider, messageStream } from '../domain/message.decider';
import { parseMessageId } from '../presentation/message-id.pipe';
import { REACTION_READS } from '../reactions.read-model';
import { SentMessages } from '../sent-messages';

export class ReactToMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly messageId: number,
    readonly change: 'AddReaction' | 'RemoveReaction',
    readonly reaction: string,
    readonly userId: string,
    readonly su: boolean,
    readonly actor: Actor,
    /** Made under a shadow ban (as the access check found): the reaction shows to its reactor alone. */
    readonly shadow = false,
  ) {}
}

/**
 * Adds or removes the token's user's reaction of one type to a message, idempotently: the
 * user must be a member of the room (su waives it, as for sends), the message one of the room's.
 * Decided on the message's own stream with its edits and deletion.
 */
@CommandHandler(ReactToMessageCommand)
export class ReactToMessageHandler implements ICommandHandler<ReactToMessageCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: ReactToMessageCommand): Promise<void> {
    const { state: user } = await this.pipeline.load(userStream(c.instanceId, c.userId), userDecider);
    if (!user.exists) throw userNotFound(c.userId);
    const room = await this.access.writableAs(c.instanceId, c.roomId, c.userId, c.su);
    const sent = await this.sentMessages.find(c.instanceId, c.roomId, c.messageId);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      messageStream(c.instanceId, c.messageId),
      messageDecider,
      {
        type: c.change,
        reaction: c.reaction,
        reactor: { userId: c.userId, userCreatedAt: user.createdAt! },
        ...(c.shadow && { shadow: true }),
        id: c.messageId,
        roomId: c.roomId,
        sent,
        roomCreatedAt: room.createdAt,
        actor: { userId: c.userId, userCreatedAt: user.createdAt!, su: c.su },
        now,
      },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
      { awaitProjections: REACTION_READS },
    );
  }
}

/** `PUT` adds the caller's reaction of `:type`, `DELETE` removes it; both answer 204, and again 204 when there was nothing to do. */
@Controller(CHATKIT_V6_ROUTE)
export class ReactToMessageController {
  constructor(private readonly commands: CommandBus) {}

  @Put('rooms/:roomId/messages/:messageId/reactions/:type')
  @Requires(Access.permission('message:react', { room: 'roomId' }))
  @HttpCode(204)
  add(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Param('type') type: string,
    @CurrentActor() actor: RequestActor,
    @ShadowBanned() shadow: boolean,
  ): Promise<void> {
    return this.react(instanceId, roomId, rawId, 'AddReaction', type, actor, shadow);
  }

  @Delete('rooms/:roomId/messages/:messageId/reactions/:type')
  @Requires(Access.permission('message:react', { room: 'roomId' }))
  @HttpCode(204)
  remove(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Param('type') type: string,
    @CurrentActor() actor: RequestActor,
    @ShadowBanned() shadow: boolean,
  ): Promise<void> {
    return this.react(instanceId, roomId, rawId, 'RemoveReaction', type, actor, shadow);
  }

  private async react(
    instanceId: string,
    roomId: string,
    rawId: string,
    change: 'AddReaction' | 'RemoveReaction',
    type: string,
    actor: RequestActor,
    shadow: boolean,
  ): Promise<void> {
    const messageId = parseMessageId(rawId);
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) whose reaction this is');
    await this.commands.execute(new ReactToMessageCommand(instanceId, roomId, messageId, change, type, actor.userId, actor.su, auditActor(actor), shadow));
  }
}
