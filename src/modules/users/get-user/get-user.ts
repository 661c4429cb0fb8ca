import { Controller, Get, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { UsersReadModel } from '../users.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class GetUserQuery {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
  ) {}
}

@QueryHandler(GetUserQuery)
export class GetUserHandler implements IQueryHandler<GetUserQuery, UserResponse> {
  constructor(private readonly users: UsersReadModel) {}

  async execute({ instanceId, userId }: GetUserQuery): Promise<UserResponse> {
    return presentUser(await this.users.get(instanceId, userId));
  }
}

@Controller(CHATKIT_ROUTE)
export class GetUserController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users/:userId')
  @Requires(Access.permission('user:get'))
  get(@Param('instanceId') instanceId: string, @Param('userId') userId: string): Promise<UserResponse> {
    return this.queries.execute(new GetUserQuery(instanceId, userId));
  }
}
