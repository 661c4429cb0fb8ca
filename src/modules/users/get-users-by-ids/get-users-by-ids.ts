import { Controller, Get, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { UsersReadModel } from '../users.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** chatkit-client asks for at most 250 users a request; leave room above that. */
export const MAX_IDS = 500;

export class GetUsersByIdsQuery {
  constructor(
    readonly instanceId: string,
    readonly userIds: string[],
  ) {}
}

/** The users that exist among the ids, in the order asked; unknown ids are left out. */
@QueryHandler(GetUsersByIdsQuery)
export class GetUsersByIdsHandler implements IQueryHandler<GetUsersByIdsQuery, UserResponse[]> {
  constructor(private readonly users: UsersReadModel) {}

  async execute({ instanceId, userIds }: GetUsersByIdsQuery): Promise<UserResponse[]> {
    const found = new Map((await this.users.findMany(instanceId, userIds)).map((u) => [u.id, u]));
    return [...new Set(userIds)].flatMap((id) => (found.has(id) ? [presentUser(found.get(id)!)] : []));
  }
}

@Controller(CHATKIT_ROUTE)
export class GetUsersByIdsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users_by_ids')
  @Requires(Access.permission('user:get'))
  get(@Param('instanceId') instanceId: string, @Query('id') id: unknown): Promise<UserResponse[]> {
    const ids = (Array.isArray(id) ? id : id === undefined ? [] : [id]).filter((v) => typeof v === 'string' && v !== '');
    if (ids.length === 0) throw unprocessable('missing_id', 'Give at least one user id as ?id=<id> (repeat it for more)');
    if (ids.length > MAX_IDS) throw unprocessable('too_many_ids', `At most ${MAX_IDS} ids per request`);
    return this.queries.execute(new GetUsersByIdsQuery(instanceId, ids as string[]));
  }
}
