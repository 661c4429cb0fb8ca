import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { MEMBERSHIPS, MembershipDocument } from '../../../../projections/rooms/memberships.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export const MEMBERS_PAGE_DEFAULT = 50;
export const MEMBERS_PAGE_MAX = 100;
/** The longest `after` taken: a user id (ids are at most a few hundred characters). */
const AFTER_MAX = 1024;

export interface RoomMember {
  readonly user_id: string;
  readonly joined_at?: string;
}

/** `after`: the id (of a user, or a room) a previous page ended with (its `next`). */
export function parseMemberCursor(raw: unknown, what: 'user' | 'room' = 'user'): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > AFTER_MAX) throw unprocessable('invalid_after', `after must be the "next" of a previous page (a ${what} id), given once`);
  return raw;
}

/**
 * `GET rooms/:roomId/members?after=&limit=`: a room's members by user id, a page at a time
 * through the memberships' (instance_id, room_id, user_id) index: a page costs its own size,
 * in a room of a million members as in one of two. `next` is the last user id of a full page.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class RoomMembersController {
  constructor(
    private readonly rooms: RoomsReadModel,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('rooms/:roomId/members')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<{ members: RoomMember[]; next?: string }> {
    const limit = parseLimit(query.limit, { fallback: MEMBERS_PAGE_DEFAULT, max: MEMBERS_PAGE_MAX });
    const after = parseMemberCursor(query.after);
    await this.rooms.get(instanceId, roomId);
    const docs = await this.readModels.find<MembershipDocument>(MEMBERSHIPS, {
      where: { instance_id: instanceId, room_id: roomId, ...(after !== undefined && { user_id: { gt: after } }) },
      sort: [{ field: 'user_id' }],
      limit: limit + 1,
    });
    const page = docs.slice(0, limit);
    return {
      members: page.map(({ user_id, joined_at }) => ({ user_id, ...(joined_at !== undefined && { joined_at }) })),
      ...(docs.length > limit && { next: page[page.length - 1].user_id }),
    };
  }
}
