import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import {
  AccessTokenGuard,
  auditActor,
  CurrentActor,
  requireSu,
} from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { NewUserDto } from '../presentation/user-fields.dto';
import { UserResponse } from '../presentation/user.presenter';
import { CreateUserCommand } from './create-user.handler';

@Controller(CHATKIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class CreateUserController {
  constructor(private readonly commands: CommandBus) {}

  @Post('users')
  @HttpCode(201)
  create(
    @Param('instanceId') instanceId: string,
    @Body() body: NewUserDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<UserResponse> {
    requireSu(actor);
    return this.commands.execute(new CreateUserCommand(instanceId, body, auditActor(actor)));
  }
}
