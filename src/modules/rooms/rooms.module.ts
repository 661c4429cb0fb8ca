import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { UsersModule } from '../users/users.module';
import { AddRoomMembersController, AddRoomMembersHandler } from './add-room-members/add-room-members';
import { CreateRoomController, CreateRoomHandler } from './create-room/create-room';
import { DeleteRoomController, DeleteRoomHandler } from './delete-room/delete-room';
import { GetRoomController, GetRoomHandler } from './get-room/get-room';
import { JoinRoomController, JoinRoomHandler } from './join-room/join-room';
import { LeaveRoomController, LeaveRoomHandler } from './leave-room/leave-room';
import { ListRoomsController, ListRoomsHandler } from './list-rooms/list-rooms';
import { ListUserRoomsController, ListUserRoomsHandler } from './list-user-rooms/list-user-rooms';
import { RemoveRoomMembersController, RemoveRoomMembersHandler } from './remove-room-members/remove-room-members';
import { SendTypingIndicatorController, SendTypingIndicatorHandler } from './send-typing-indicator/send-typing-indicator';
import { UpdateRoomController, UpdateRoomHandler } from './update-room/update-room';
import { RoomMembers } from './room-members';
import { RoomsReadModel } from './rooms.read-model';
import { RoomAccess } from './room-access';
import { MembershipsSubscription } from './subscribe-to-memberships/subscribe-to-memberships';

/** Rooms and who is in them. */
@Module({
  imports: [InstancesModule, UsersModule],
  controllers: [
    CreateRoomController,
    ListRoomsController,
    GetRoomController,
    UpdateRoomController,
    DeleteRoomController,
    AddRoomMembersController,
    RemoveRoomMembersController,
    JoinRoomController,
    LeaveRoomController,
    ListUserRoomsController,
    SendTypingIndicatorController,
  ],
  providers: [
    RoomsReadModel,
    RoomAccess,
    MembershipsSubscription,
    RoomMembers,
    CreateRoomHandler,
    ListRoomsHandler,
    GetRoomHandler,
    UpdateRoomHandler,
    DeleteRoomHandler,
    AddRoomMembersHandler,
    RemoveRoomMembersHandler,
    JoinRoomHandler,
    LeaveRoomHandler,
    ListUserRoomsHandler,
    SendTypingIndicatorHandler,
  ],
  exports: [RoomsReadModel, RoomAccess],
})
export class RoomsModule {}
