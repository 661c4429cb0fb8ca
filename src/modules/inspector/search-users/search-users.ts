import { Controller, Get, Param, Query } from '@nestjs/common';
import { parseLimit } from '../../../shared/http/query-params';
import { USERS, UserDocument } from '../../../../projections/users/users.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parsePrefix, SEARCH_PAGE_DEFAULT, SEARCH_PAGE_MAX } from '../prefix-search';
import { UserAndRoomSearch } from '../user-and-room-search';

export interface UserSummary {
  readonly id: string;
  readonly name: string;
  readonly avatar_url?: string;
  readonly created_at: string;
  readonly updated_at: string;
}

const summaryOf = (user: UserDocument): UserSummary => ({
  id: user.id,
  name: user.name,
  ...(user.avatar_url !== undefined && { avatar_url: user.avatar_url }),
  created_at: user.created_at,
  updated_at: user.updated_at,
});

/**
 * `GET users?prefix=&after=&limit=`: the instance's users whose id or name starts with
 * `prefix` (case-sensitive; every user by id without one), a page at a time through the read
 * model's indexes, for the console. `next` is the `after` of the next page.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class SearchUsersController {
  constructor(private readonly searches: UserAndRoomSearch) {}

  @Get('users')
  @Requires(Access.su)
  async search(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>): Promise<{ users: UserSummary[]; next?: string }> {
    const limit = parseLimit(query.limit, { fallback: SEARCH_PAGE_DEFAULT, max: SEARCH_PAGE_MAX });
    const page = await this.searches.search<UserDocument>({ collection: USERS, kind: 'user' }, instanceId, { prefix: parsePrefix(query.prefix), after: query.after as string | undefined, limit });
    return { users: page.found.map(summaryOf), ...(page.next !== undefined && { next: page.next }) };
  }
}
