import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { userDecider, userStream } from '../domain/user.decider';
import { NewUserDto } from '../presentation/user-fields.dto';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { UsersReadModel } from '../users.read-model';
import { ProfileKeys } from '../profile-keys/profile-keys';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class CreateUserCommand {
  constructor(
    readonly instanceId: string,
    readonly user: NewUserDto,
    readonly actor: Actor,
  ) {}
}

@CommandHandler(CreateUserCommand)
export class CreateUserHandler implements ICommandHandler<CreateUserCommand, UserResponse> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly users: UsersReadModel,
    private readonly profileKeys: ProfileKeys,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, user, actor }: CreateUserCommand): Promise<UserResponse> {
    const now = this.clock.now().toISOString();
    const [profileKey] = await this.profileKeys.take(instanceId);
    await this.pipeline.run(
      userStream(instanceId, user.id),
      userDecider,
      { type: 'CreateUser', ...user, now, profile_key: profileKey },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    return presentUser(await this.users.get(instanceId, user.id));
  }
}

@Controller(CHATKIT_ROUTE)
export class CreateUserController {
  constructor(private readonly commands: CommandBus) {}

  @Post('users')
  @Requires(Access.su)
  @HttpCode(201)
  create(
    @Param('instanceId') instanceId: string,
    @Body() body: NewUserDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<UserResponse> {
    return this.commands.execute(new CreateUserCommand(instanceId, body, auditActor(actor)));
  }
}
