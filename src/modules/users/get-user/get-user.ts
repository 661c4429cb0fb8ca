import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { AccessTokenGuard } from '../../instances/authentication/access-token.guard';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { UsersReadModel } from '../users.read-model';

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
@UseGuards(AccessTokenGuard)
export class GetUserController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users/:userId')
  get(@Param('instanceId') instanceId: string, @Param('userId') userId: string): Promise<UserResponse> {
    return this.queries.execute(new GetUserQuery(instanceId, userId));
  }
}
