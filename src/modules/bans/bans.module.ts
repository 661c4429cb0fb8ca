import { Module } from '@nestjs/common';
import { RoomsModule } from '../rooms/rooms.module';
import { BanUserHandler, InstanceBansController, RoomBansController } from './ban-user/ban-user';
import { FreezeRoomController, FreezeRoomHandler } from './freeze-room/freeze-room';
import { ListBansHandler, ListInstanceBansController, ListRoomBansController } from './list-bans/list-bans';

/**
 * Bans (of a room, of the instance; optionally shadowed) and frozen rooms. What they stop is
 * decided for every route in one place, `Restrictions`, which the roles module's access check
 * calls after each route's own rule.
 */
@Module({
  imports: [RoomsModule],
  controllers: [RoomBansController, InstanceBansController, ListRoomBansController, ListInstanceBansController, FreezeRoomController],
  providers: [BanUserHandler, ListBansHandler, FreezeRoomHandler],
})
export class BansModule {}
