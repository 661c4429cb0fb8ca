import { Controller, Get, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { unprocessable } from '../../../shared/domain/errors';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { presentRoom, RoomResponse } from '../presentation/room.presenter';
import { RoomsReadModel } from '../rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** Seed limit: at most 100 rooms per page. */
export const ROOMS_PER_PAGE = 100;

export class ListRoomsQuery {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly fromId: string | undefined,
    readonly includePrivate: boolean,
  ) {}
}

@QueryHandler(ListRoomsQuery)
export class ListRoomsHandler implements IQueryHandler<ListRoomsQuery, RoomResponse[]> {
  constructor(private readonly rooms: RoomsReadModel) {}

  async execute({ instanceId, version, fromId, includePrivate }: ListRoomsQuery): Promise<RoomResponse[]> {
    const rooms = await this.rooms.list(instanceId, fromId, includePrivate, ROOMS_PER_PAGE);
    const withMembers = await this.rooms.withMembers(rooms);
    return withMembers.map(({ room, memberIds }) => presentRoom(version, room, version === 6 ? memberIds : undefined));
  }
}

@Controller(CHATKIT_ROUTE)
export class ListRoomsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms')
  @Requires(Access.permission('room:get'))
  list(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<RoomResponse[]> {
    const flag = query.include_private;
    if (flag !== undefined && flag !== 'true' && flag !== 'false' && flag !== '') {
      throw unprocessable('invalid_include_private', 'include_private must be true or false');
    }
    const includePrivate = flag === 'true';
    if (includePrivate) requireSu(actor);
    const fromId = typeof query.from_id === 'string' && query.from_id !== '' ? query.from_id : undefined;
    if (query.from_id !== undefined && typeof query.from_id !== 'string') {
      throw unprocessable('invalid_from_id', 'from_id must be given once');
    }
    return this.queries.execute(new ListRoomsQuery(instanceId, version, fromId, includePrivate));
  }
}
