import { Module, OnModuleInit } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { RoomsModule } from '../rooms/rooms.module';
import { GetReadCursorController, GetReadCursorHandler } from './get-read-cursor/get-read-cursor';
import { ListRoomCursorsController, ListRoomCursorsHandler } from './list-room-cursors/list-room-cursors';
import { ListUserCursorsController, ListUserCursorsHandler } from './list-user-cursors/list-user-cursors';
import { SetReadCursorController, SetReadCursorHandler } from './set-read-cursor/set-read-cursor';
import { CursorSubscriptions } from './subscribe-cursors/cursor-subscriptions';
import { CursorsReadModel } from './cursors.read-model';

/** Read cursors (chatkit_cursors v2): set, get, list by user or room, and their subscriptions. */
@Module({
  imports: [InstancesModule, RoomsModule],
  controllers: [SetReadCursorController, GetReadCursorController, ListUserCursorsController, ListRoomCursorsController],
  providers: [
    CursorsReadModel,
    CursorSubscriptions,
    SetReadCursorHandler,
    GetReadCursorHandler,
    ListUserCursorsHandler,
    ListRoomCursorsHandler,
  ],
  exports: [CursorsReadModel],
})
export class CursorsModule implements OnModuleInit {
  constructor(private readonly subscriptions: CursorSubscriptions) {}

  onModuleInit(): void {
    this.subscriptions.register();
  }
}
