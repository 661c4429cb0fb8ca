import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { USERS, UserDocument } from '../../../../projections/users/users.projection';
import { presentUser, UserResponse } from '../presentation/user.presenter';
import { parseLimit } from '../../../shared/http/query-params';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class ListUsersQuery {
  constructor(
    readonly instanceId: string,
    /** Inclusive, as an ISO timestamp normalised to milliseconds. */
    readonly fromTs: string | undefined,
    readonly limit: number,
  ) {}
}

/** Users by creation time, oldest first. */
@QueryHandler(ListUsersQuery)
export class ListUsersHandler implements IQueryHandler<ListUsersQuery, UserResponse[]> {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async execute({ instanceId, fromTs, limit }: ListUsersQuery): Promise<UserResponse[]> {
    const docs = await this.readModels.find<UserDocument>(USERS, {
      where: { instance_id: instanceId, ...(fromTs && { created_at: { gte: fromTs } }) },
      sort: [{ field: 'created_at' }, { field: 'id' }],
      limit,
    });
    return docs.map(presentUser);
  }
}


@Controller(CHATKIT_ROUTE)
export class ListUsersController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users')
  @Requires(Access.permission('user:get'))
  list(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>): Promise<UserResponse[]> {
    let fromTs: string | undefined;
    if (query.from_ts !== undefined && query.from_ts !== '') {
      const parsed = typeof query.from_ts === 'string' ? new Date(query.from_ts) : new Date(NaN);
      if (Number.isNaN(parsed.getTime())) {
        throw unprocessable('invalid_from_ts', 'from_ts must be an ISO 8601 timestamp such as 2017-03-23T11:36:42Z');
      }
      fromTs = parsed.toISOString();
    }
    const limit = parseLimit(query.limit, { fallback: 20, max: 100 });
    return this.queries.execute(new ListUsersQuery(instanceId, fromTs, limit));
  }
}
