import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { READ_CURSORS, ReadCursorDocument } from '../../../../projections/cursors/cursors.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { presentCursor, ReadCursor } from '../../cursors/presentation/cursor.presenter';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parseMemberCursor } from '../room-members/room-members';

export const CURSORS_PAGE_DEFAULT = 50;
export const CURSORS_PAGE_MAX = 100;
/**
 * The read cursors of a room (by user id) or of a user (by room id), a page at a time through
 * the cursors' (instance_id, room_id, user_id) and (instance_id, user_id, room_id) indexes; the
 * Chatkit cursors routes answer all of them at once. `next` is the last id of a full page.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class ReadCursorsController {
  constructor(
    private readonly rooms: RoomsReadModel,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('rooms/:roomId/cursors')
  @Requires(Access.su)
  async ofRoom(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @Query() query: Record<string, unknown>) {
    const request = this.pageRequest(query, 'user');
    await this.rooms.get(instanceId, roomId);
    return this.page({ instance_id: instanceId, room_id: roomId }, 'user_id', request);
  }

  @Get('users/:userId/cursors')
  @Requires(Access.su)
  ofUser(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Query() query: Record<string, unknown>) {
    return this.page({ instance_id: instanceId, user_id: userId }, 'room_id', this.pageRequest(query, 'room'));
  }

  private pageRequest(query: Record<string, unknown>, what: 'user' | 'room') {
    return { after: parseMemberCursor(query.after, what), limit: parseLimit(query.limit, { fallback: CURSORS_PAGE_DEFAULT, max: CURSORS_PAGE_MAX }) };
  }

  private async page(
    where: Record<string, string>,
    by: 'user_id' | 'room_id',
    { after, limit }: { after: string | undefined; limit: number },
  ): Promise<{ cursors: ReadCursor[]; next?: string }> {
    const docs = await this.readModels.find<ReadCursorDocument>(READ_CURSORS, {
      where: { ...where, ...(after !== undefined && { [by]: { gt: after } }) },
      sort: [{ field: by }],
      limit: limit + 1,
    });
    const page = docs.slice(0, limit);
    return { cursors: page.map(presentCursor), ...(docs.length > limit && { next: page[page.length - 1][by] }) };
  }
}
