import { Controller, Delete, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { mutesDecider, mutesStream } from '../domain/mutes.decider';
import { MUTE_READS } from '../mutes.read-model';

export class MuteUserCommand {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    readonly mutedUserId: string,
    readonly mute: boolean,
    readonly actor: Actor,
  ) {}
}

/**
 * Mutes (or unmutes) a user for the muting user only, on the muter's mutes stream. Both must
 * exist to mute; unmuting needs only the muter (the muted user may be gone).
 */
@CommandHandler(MuteUserCommand)
export class MuteUserHandler implements ICommandHandler<MuteUserCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: MuteUserCommand): Promise<void> {
    const { state: user } = await this.pipeline.load(userStream(c.instanceId, c.userId), userDecider);
    if (!user.exists) throw userNotFound(c.userId);
    const muter = { userId: c.userId, userCreatedAt: user.createdAt! };
    const now = this.clock.now().toISOString();
    let command: Parameters<typeof mutesDecider.decide>[0];
    if (c.mute) {
      const { state: muted } = await this.pipeline.load(userStream(c.instanceId, c.mutedUserId), userDecider);
      if (!muted.exists) throw userNotFound(c.mutedUserId);
      command = { type: 'MuteUser', user: muter, muted: { userId: c.mutedUserId, userCreatedAt: muted.createdAt! }, now };
    } else {
      command = { type: 'UnmuteUser', user: muter, mutedUserId: c.mutedUserId, now };
    }
    await this.pipeline.run(mutesStream(c.instanceId, c.userId), mutesDecider, command, { instance_id: c.instanceId, actor: c.actor, occurred_at: now }, { awaitProjections: MUTE_READS });
  }
}

/** `PUT …/users/:userId/mutes/:mutedUserId` mutes, `DELETE` unmutes: the user themselves (or su); both 204, also when nothing changes. */
@Controller(CHATKIT_V6_ROUTE)
export class MuteUserController {
  constructor(private readonly commands: CommandBus) {}

  @Put('users/:userId/mutes/:mutedUserId')
  @Requires(Access.selfOrSu('userId'))
  @HttpCode(204)
  async mute(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Param('mutedUserId') mutedUserId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new MuteUserCommand(instanceId, userId, mutedUserId, true, auditActor(actor)));
  }

  @Delete('users/:userId/mutes/:mutedUserId')
  @Requires(Access.selfOrSu('userId'))
  @HttpCode(204)
  async unmute(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Param('mutedUserId') mutedUserId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new MuteUserCommand(instanceId, userId, mutedUserId, false, auditActor(actor)));
  }
}
