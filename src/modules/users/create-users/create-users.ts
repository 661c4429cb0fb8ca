import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, ValidateNested } from '../../../shared/http/class-validator-parts';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
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

export class CreateUsersCommand {
  constructor(
    readonly instanceId: string,
    readonly users: NewUserDto[],
    readonly actor: Actor,
  ) {}
}

/**
 * Creates up to 25 users. Every user is checked before any is written, so a batch with one
 * existing or repeated id writes nothing; their profile keys come from the process's block
 * (no key written per user), and the appends then go out together (on SQLite they share one
 * commit).
 */
@CommandHandler(CreateUsersCommand)
export class CreateUsersHandler implements ICommandHandler<CreateUsersCommand, UserResponse[]> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly users: UsersReadModel,
    private readonly profileKeys: ProfileKeys,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, users, actor }: CreateUsersCommand): Promise<UserResponse[]> {
    const ids = users.map((u) => u.id);
    const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
    if (repeated !== undefined) throw badRequest('duplicate_user_id', `The user id "${repeated}" appears twice in the batch`);
    const now = this.clock.now().toISOString();
    const command = (user: NewUserDto, profileKey?: string) => ({ type: 'CreateUser' as const, ...user, now, profile_key: profileKey });
    for (const user of users) {
      const { state } = await this.pipeline.load(userStream(instanceId, user.id), userDecider);
      userDecider.decide(command(user), state); // throws user_already_exists before anything is written
    }
    const profileKeys = await this.profileKeys.take(instanceId, users.length);
    await Promise.all(
      users.map((user, i) =>
        this.pipeline.run(userStream(instanceId, user.id), userDecider, command(user, profileKeys[i]), {
          instance_id: instanceId,
          actor,
          occurred_at: now,
        }),
      ),
    );
    const created = new Map((await this.users.findMany(instanceId, ids)).map((u) => [u.id, u]));
    return ids.map((id) => presentUser(created.get(id)!));
  }
}

/** Seed limit: at most 25 users per batch. */
export const MAX_BATCH_USERS = 25;

class CreateUsersDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_USERS, { message: `users: at most ${MAX_BATCH_USERS} users per batch` })
  // @ValidateNested passes an entry that is itself an array (it validates that array's items instead).
  @IsObject({ each: true, message: 'users: each entry must be a user object' })
  @ValidateNested({ each: true })
  @Type(() => NewUserDto)
  users: NewUserDto[];
}

@Controller(CHATKIT_ROUTE)
export class CreateUsersController {
  constructor(private readonly commands: CommandBus) {}

  @Post('batch_users')
  @Requires(Access.su)
  @HttpCode(201)
  create(
    @Param('instanceId') instanceId: string,
    @Body() body: CreateUsersDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<UserResponse[]> {
    return this.commands.execute(new CreateUsersCommand(instanceId, body.users, auditActor(actor)));
  }
}
