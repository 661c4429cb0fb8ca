import { Body, Controller, HttpCode, Module, Param, Post, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsOptional, IsString, Matches, MaxLength } from '../../../shared/http/class-validator-parts';
import type { FastifyReply } from 'fastify';
import { DomainError, notFound } from '../../../shared/domain/errors';
import { KeyRing } from '../../instances/authentication/key-ring';
import { InstancesModule } from '../../instances/instances.module';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { CreateUserCommand } from '../create-user/create-user';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { UsersModule } from '../users.module';
import { UsersReadModel } from '../users.read-model';

/** What the test token provider accepts as a user id, less what a URL or a screen would mangle. */
export const DEMO_USER_ID = /^[A-Za-z0-9_.@-]{1,59}$/;

export class DemoUserDto {
  @IsString()
  @Matches(DEMO_USER_ID, { message: 'id must be 1 to 59 of A-Z a-z 0-9 _ . @ -' })
  id: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  name?: string;
}

/**
 * The demo chat's sign-up (/demo, docs/demo.md): creates the user the visitor picked, or answers
 * the one that exists, so the page can then connect with a token of the test token provider.
 * Creating a user takes an su token, which a page must never hold; this route is what a chat
 * app's own backend does with chatkit-server's createUser. It is no wider than the token
 * provider it sits beside (which signs a token for any user id to anyone): served only while the
 * demo is (TOKEN_PROVIDER_ENABLED for the bootstrap instance), only for an instance whose
 * provider is on, and limited per client address like it (RATE_LIMIT_ANONYMOUS_PER_*).
 */
@Controller('services/parley_demo/v1/:instanceId')
export class SignUpDemoUserController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UsersReadModel,
    private readonly keyRing: KeyRing,
  ) {}

  @Post('users')
  @Requires(Access.public)
  @HttpCode(201)
  async signUp(
    @Param('instanceId') instanceId: string,
    @Body() body: DemoUserDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UserResponse> {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance?.tokenProviderEnabled) {
      throw notFound('instance_not_found', `No test token provider is enabled for the instance "${instanceId}"`);
    }
    const existing = await this.users.find(instanceId, body.id);
    if (existing) {
      void reply.status(200);
      return presentUser(existing);
    }
    const user = { id: body.id, name: body.name?.trim() || body.id };
    try {
      return await this.commands.execute(new CreateUserCommand(instanceId, user, { key_id: 'demo', user_id: body.id }));
    } catch (error) {
      // Two tabs picking the same new name at once: the second signs in as the first created it.
      if (!(error instanceof DomainError && error.reason === 'user_already_exists')) throw error;
      void reply.status(200);
      return presentUser(await this.users.get(instanceId, body.id));
    }
  }
}

/** Imported by the application only while the demo page is served (AppModule.forRuntime). */
@Module({
  imports: [InstancesModule, UsersModule],
  controllers: [SignUpDemoUserController],
})
export class SignUpDemoUserModule {}
