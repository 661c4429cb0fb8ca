import { Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { badRequest } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { EPHEMERAL_BUS, EphemeralBus } from '../../../shared/ports/ephemeral-bus.port';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../room-access';
import { typingChannel, TypingSignal } from '../typing-channel';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { Restrictions } from '../../bans/restrictions';

export class SendTypingIndicatorCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
  ) {}
}

/**
 * A member tells the room they are typing. Ephemeral: nothing is appended to the log; the
 * signal goes out on the ephemeral bus to every process serving the room's subscribers.
 * Membership is checked on write-side state, and su waives nothing: only members type.
 */
@CommandHandler(SendTypingIndicatorCommand)
export class SendTypingIndicatorHandler implements ICommandHandler<SendTypingIndicatorCommand, void> {
  constructor(
    private readonly access: RoomAccess,
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
    private readonly restrictions: Restrictions,
  ) {}

  async execute({ instanceId, roomId, userId }: SendTypingIndicatorCommand): Promise<void> {
    await this.access.writableAs(instanceId, roomId, userId, false);
    // A shadow-banned user's typing is answered as any other and shown to no one.
    if ((await this.restrictions.shadowViewer({ instanceId, userId, su: false }, roomId)) !== undefined) return;
    const signal: TypingSignal = { user_id: userId };
    await this.bus.publish(typingChannel(instanceId, roomId), signal);
  }
}

@Controller(CHATKIT_ROUTE)
export class SendTypingIndicatorController {
  constructor(private readonly commands: CommandBus) {}

  /** Any body is ignored (chatkit-client sends none); the answer has no body. */
  @Post('rooms/:roomId/typing_indicators')
  @Requires(Access.permission('room:typing_indicator:create', { room: 'roomId' }))
  @HttpCode(200)
  async send(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    if (actor.userId === undefined) {
      throw badRequest('missing_user', 'A typing indicator needs a token with a "sub" claim naming the typing user');
    }
    await this.commands.execute(new SendTypingIndicatorCommand(instanceId, roomId, actor.userId));
  }
}
