import { Controller, Get, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomNotFound } from '../domain/room.decider';
import { presentRoom, RoomResponse } from '../presentation/room.presenter';
import { RoomsReadModel } from '../rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class GetRoomQuery {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly roomId: string,
    readonly actor: RequestActor,
  ) {}
}

/** A private room is only shown to its members (and su callers); to others it does not exist. */
@QueryHandler(GetRoomQuery)
export class GetRoomHandler implements IQueryHandler<GetRoomQuery, RoomResponse> {
  constructor(private readonly rooms: RoomsReadModel) {}

  async execute({ instanceId, version, roomId, actor }: GetRoomQuery): Promise<RoomResponse> {
    const room = await this.rooms.get(instanceId, roomId);
    const memberIds = await this.rooms.memberIds(instanceId, roomId);
    if (room.private && !actor.su && !(actor.userId && memberIds.includes(actor.userId))) throw roomNotFound(roomId);
    return presentRoom(version, room, memberIds);
  }
}

@Controller(CHATKIT_ROUTE)
export class GetRoomController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId')
  @Requires(Access.permission('room:get', { room: 'roomId' }))
  get(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<RoomResponse> {
    return this.queries.execute(new GetRoomQuery(instanceId, version, roomId, actor));
  }
}
