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

export class GetReadCursorQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly actor: RequestActor,
  ) {}
}

/** A user's cursor in a room, or null. Anyone may read their own; others' need su or the room's visibility. */
@QueryHandler(GetReadCursorQuery)
export class GetReadCursorHandler implements IQueryHandler<GetReadCursorQuery, ReadCursor | null> {
  constructor(
    private readonly cursors: CursorsReadModel,
    private readonly access: RoomAccess,
  ) {}

  async execute({ instanceId, roomId, userId, actor }: GetReadCursorQuery): Promise<ReadCursor | null> {
    if (!actor.su && actor.userId !== userId) await this.access.readable(instanceId, roomId, actor);
    return this.cursors.cursor(instanceId, roomId, userId);
  }
}

@Controller(CURSORS_ROUTE)
export class GetReadCursorController {
  constructor(private readonly queries: QueryBus) {}

  @Get('cursors/0/rooms/:roomId/users/:userId')
  @Requires(Access.permission('cursors:read:get', { room: 'roomId' }))
  get(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('userId') userId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<ReadCursor | null> {
    return this.queries.execute(new GetReadCursorQuery(instanceId, roomId, userId, actor));
  }
}
