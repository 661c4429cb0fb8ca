import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { IsObject, IsOptional, IsString, MaxLength } from '../../../shared/http/class-validator-parts';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { userDecider, userStream } from '../domain/user.decider';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

class UpdateUserDto {
  @IsOptional()
  @IsString()
  @MaxLength(500)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  avatar_url?: string;

  @IsOptional()
  @IsObject()
  custom_data?: Record<string, unknown>;
}

export class UpdateUserCommand {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    readonly changes: UpdateUserDto,
    readonly actor: Actor,
  ) {}
}

@CommandHandler(UpdateUserCommand)
export class UpdateUserHandler implements ICommandHandler<UpdateUserCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, userId, changes, actor }: UpdateUserCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    const { name, avatar_url, custom_data } = changes;
    await this.pipeline.run(
      userStream(instanceId, userId),
      userDecider,
      { type: 'UpdateUser', id: userId, name, avatar_url, custom_data, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

@Controller(CHATKIT_ROUTE)
export class UpdateUserController {
  constructor(private readonly commands: CommandBus) {}

  @Put('users/:userId')
  @Requires(Access.permission('user:update', { self: 'userId' }))
  @HttpCode(204)
  async update(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @Body() body: UpdateUserDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    if (body.name === undefined && body.avatar_url === undefined && body.custom_data === undefined) {
      throw badRequest('no_fields', 'Give at least one of name, avatar_url and custom_data');
    }
    await this.commands.execute(new UpdateUserCommand(instanceId, userId, body, auditActor(actor)));
  }
}
