import { Controller, Delete, HttpCode, Inject, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { userDecider, userStream } from '../domain/user.decider';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class DeleteUserCommand {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    readonly actor: Actor,
  ) {}
}

/** Deletes a user; the memberships projection removes the user from every room. */
@CommandHandler(DeleteUserCommand)
export class DeleteUserHandler implements ICommandHandler<DeleteUserCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, userId, actor }: DeleteUserCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      userStream(instanceId, userId),
      userDecider,
      { type: 'DeleteUser', id: userId, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

@Controller(CHATKIT_ROUTE)
export class DeleteUserController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('users/:userId')
  @Requires(Access.su)
  @HttpCode(204)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new DeleteUserCommand(instanceId, userId, auditActor(actor)));
  }
}
