import { Controller, Get, Inject, Param } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { MEMBERSHIPS } from '../../../../projections/rooms/memberships.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/**
 * `GET rooms/:roomId`: one room as the console's room page shows it: its facts and member
 * count, without its member ids (Chatkit's room answers every one of them; the members are
 * paged by `rooms/:roomId/members`).
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class RoomSummaryController {
  constructor(
    private readonly rooms: RoomsReadModel,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('rooms/:roomId')
  @Requires(Access.su)
  async get(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string) {
    const room = await this.rooms.get(instanceId, roomId);
    const memberCount = await this.readModels.count(MEMBERSHIPS, { instance_id: instanceId, room_id: roomId });
    return {
      id: room.id,
      name: room.name,
      private: room.private,
      ...(room.created_by_id !== undefined && { created_by_id: room.created_by_id }),
      ...(room.custom_data !== undefined && { custom_data: room.custom_data }),
      member_count: memberCount,
      created_at: room.created_at,
      updated_at: room.updated_at,
    };
  }
}
