import { Controller, Get, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { CURSORS_ROUTE } from '../cursors-route';
import { CursorsReadModel } from '../cursors.read-model';
import { ReadCursor } from '../presentation/cursor.presenter';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class ListRoomCursorsQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly actor: RequestActor,
  ) {}
}

/** Every cursor set in a room, by user id; a private room's only for its members and su. */
@QueryHandler(ListRoomCursorsQuery)
export class ListRoomCursorsHandler implements IQueryHandler<ListRoomCursorsQuery, ReadCursor[]> {
  constructor(
    private readonly cursors: CursorsReadModel,
    private readonly access: RoomAccess,
  ) {}

  async execute({ instanceId, roomId, actor }: ListRoomCursorsQuery): Promise<ReadCursor[]> {
    await this.access.readable(instanceId, roomId, actor);
    return this.cursors.cursorsOfRoom(instanceId, roomId);
  }
}

@Controller(CURSORS_ROUTE)
export class ListRoomCursorsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('cursors/0/rooms/:roomId')
  @Requires(Access.permission('cursors:read:get', { room: 'roomId' }))
  list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<ReadCursor[]> {
    return this.queries.execute(new ListRoomCursorsQuery(instanceId, roomId, actor));
  }
}
