import { Controller, Get, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CURSORS_ROUTE } from '../cursors-route';
import { CursorsReadModel } from '../cursors.read-model';
import { ReadCursor } from '../presentation/cursor.presenter';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class ListUserCursorsQuery {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
  ) {}
}

/** Every cursor of a user, by room id (which rooms a user reads is theirs to see, or su's). */
@QueryHandler(ListUserCursorsQuery)
export class ListUserCursorsHandler implements IQueryHandler<ListUserCursorsQuery, ReadCursor[]> {
  constructor(private readonly cursors: CursorsReadModel) {}

  execute({ instanceId, userId }: ListUserCursorsQuery): Promise<ReadCursor[]> {
    return this.cursors.cursorsOfUser(instanceId, userId);
  }
}

@Controller(CURSORS_ROUTE)
export class ListUserCursorsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('cursors/0/users/:userId')
  @Requires(Access.permission('cursors:read:get', { self: 'userId' }))
  list(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
  ): Promise<ReadCursor[]> {
    return this.queries.execute(new ListUserCursorsQuery(instanceId, userId));
  }
}
