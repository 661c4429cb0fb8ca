import { Controller, Get, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { UsersReadModel } from '../../users/users.read-model';
import { presentRoom, RoomResponse } from '../presentation/room.presenter';
import { RoomsReadModel, RoomWithMembers } from '../rooms.read-model';
import { RoomDocument } from '../../../../projections/rooms/rooms.projection';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class ListUserRoomsQuery {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    /** true: the public rooms the user could join instead of the rooms the user is in. */
    readonly joinable: boolean,
  ) {}
}

@QueryHandler(ListUserRoomsQuery)
export class ListUserRoomsHandler implements IQueryHandler<ListUserRoomsQuery, RoomWithMembers[]> {
  constructor(
    private readonly users: UsersReadModel,
    private readonly rooms: RoomsReadModel,
  ) {}

  async execute({ instanceId, userId, joinable }: ListUserRoomsQuery): Promise<RoomWithMembers[]> {
    await this.users.get(instanceId, userId);
    const mine = await this.rooms.roomsOf(instanceId, userId);
    if (!joinable) return this.rooms.withMembers(mine, userId);
    const inside = new Set(mine.map((r) => r.id));
    const open: RoomDocument[] = [];
    for (let after: string | undefined; ; ) {
      const page = await this.rooms.list(instanceId, after, false, 1000);
      open.push(...page.filter((r) => !inside.has(r.id)));
      if (page.length < 1000) break;
      after = page[page.length - 1].id;
    }
    return this.rooms.withMembers(open);
  }
}

/** v2 answers `{rooms: [...]}` (seed); v6 answers the array itself (chatkit-server, chatkit-client). */
@Controller(CHATKIT_ROUTE)
export class ListUserRoomsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('users/:userId/rooms')
  @Requires(Access.permission('user:rooms:get', { self: 'userId' }))
  async list(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('userId') userId: string,
    @Query('joinable') joinableFlag: unknown,
  ): Promise<RoomResponse[] | { rooms: RoomResponse[] }> {
    if (joinableFlag !== undefined && joinableFlag !== 'true' && joinableFlag !== 'false') {
      throw unprocessable('invalid_joinable', 'joinable must be true or false');
    }
    const found: RoomWithMembers[] = await this.queries.execute(
      new ListUserRoomsQuery(instanceId, userId, joinableFlag === 'true'),
    );
    const rooms = found.map(({ room, memberIds, unreadCount }) => presentRoom(version, room, memberIds, unreadCount));
    return version === 2 ? { rooms } : rooms;
  }
}
