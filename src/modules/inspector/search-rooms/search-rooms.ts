import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { parseLimit } from '../../../shared/http/query-params';
import { ROOMS, RoomDocument } from '../../../../projections/rooms/rooms.projection';
import { MEMBERSHIPS } from '../../../../projections/rooms/memberships.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parsePrefix, SEARCH_PAGE_DEFAULT, SEARCH_PAGE_MAX } from '../prefix-search';
import { UserAndRoomSearch } from '../user-and-room-search';

export interface RoomSummary {
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly member_count: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/**
 * `GET rooms?prefix=&after=&limit=`: the instance's rooms, private ones included (the caller
 * is su), whose id or name starts with `prefix`, a page at a time through the read model's
 * indexes, each with its member count (counted on the memberships' room index).
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class SearchRoomsController {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly searches: UserAndRoomSearch,
  ) {}

  @Get('rooms')
  @Requires(Access.su)
  async search(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>): Promise<{ rooms: RoomSummary[]; next?: string }> {
    const limit = parseLimit(query.limit, { fallback: SEARCH_PAGE_DEFAULT, max: SEARCH_PAGE_MAX });
    const page = await this.searches.search<RoomDocument>({ collection: ROOMS, kind: 'room' }, instanceId, { prefix: parsePrefix(query.prefix), after: query.after as string | undefined, limit });
    const counts = await Promise.all(page.found.map((room) => this.readModels.count(MEMBERSHIPS, { instance_id: instanceId, room_id: room.id })));
    const rooms = page.found.map((room, i) => ({
      id: room.id,
      name: room.name,
      private: room.private,
      member_count: counts[i],
      created_at: room.created_at,
      updated_at: room.updated_at,
    }));
    return { rooms, ...(page.next !== undefined && { next: page.next }) };
  }
}
