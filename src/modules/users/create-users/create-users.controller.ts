import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
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
import { CreateUsersCommand } from './create-users.handler';

/** Seed limit: at most 25 users per batch. */
export const MAX_BATCH_USERS = 25;

class CreateUsersDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_USERS, { message: `users: at most ${MAX_BATCH_USERS} users per batch` })
  @ValidateNested({ each: true })
  @Type(() => NewUserDto)
  users: NewUserDto[];
}

@Controller(CHATKIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class CreateUsersController {
  constructor(private readonly commands: CommandBus) {}

  @Post('batch_users')
  @HttpCode(201)
  create(
    @Param('instanceId') instanceId: string,
    @Body() body: CreateUsersDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<UserResponse[]> {
    requireSu(actor);
    return this.commands.execute(new CreateUsersCommand(instanceId, body.users, auditActor(actor)));
  }
}
