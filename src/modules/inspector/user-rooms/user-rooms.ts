import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { MEMBERSHIPS, MembershipDocument } from '../../../../projections/rooms/memberships.projection';
import { ROOMS, RoomDocument, roomDocumentId } from '../../../../projections/rooms/rooms.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parseMemberCursor } from '../room-members/room-members';

export const USER_ROOMS_PAGE_DEFAULT = 50;
export const USER_ROOMS_PAGE_MAX = 100;

export interface UserRoom {
  readonly id: string;
  readonly name: string;
  readonly private: boolean;
  readonly joined_at?: string;
}

/**
 * `GET users/:userId/rooms?after=&limit=`: the rooms a user is a member of, by room id, a page
 * at a time through the memberships' (instance_id, user_id, room_id) index, each with its name
 * and privacy (Chatkit's answer for a user's rooms holds every room with all its member ids).
 * `next` is the last room id of a full page; a user in no room (or none) gets an empty page.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class UserRoomsController {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  @Get('users/:userId/rooms')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Query() query: Record<string, unknown>): Promise<{ rooms: UserRoom[]; next?: string }> {
    const limit = parseLimit(query.limit, { fallback: USER_ROOMS_PAGE_DEFAULT, max: USER_ROOMS_PAGE_MAX });
    const after = parseMemberCursor(query.after, 'room');
    const memberships = await this.readModels.find<MembershipDocument>(MEMBERSHIPS, {
      where: { instance_id: instanceId, user_id: userId, ...(after !== undefined && { room_id: { gt: after } }) },
      sort: [{ field: 'room_id' }],
      limit: limit + 1,
    });
    const page = memberships.slice(0, limit);
    const rooms = new Map((await this.readModels.getMany<RoomDocument>(ROOMS, page.map((m) => roomDocumentId(instanceId, m.room_id)))).map((r) => [r.id, r]));
    return {
      // A membership the rooms read model does not show yet (or any more) is left out.
      rooms: page.flatMap((m) => {
        const room = rooms.get(m.room_id);
        return room ? [{ id: room.id, name: room.name, private: room.private, ...(m.joined_at !== undefined && { joined_at: m.joined_at }) }] : [];
      }),
      ...(memberships.length > limit && { next: page[page.length - 1].room_id }),
    };
  }
}
