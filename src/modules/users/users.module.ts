import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { CreateUserController, CreateUserHandler } from './create-user/create-user';
import { CreateUsersController, CreateUsersHandler } from './create-users/create-users';
import { DeleteUserController, DeleteUserHandler } from './delete-user/delete-user';
import { GetUserController, GetUserHandler } from './get-user/get-user';
import { GetUsersByIdsController, GetUsersByIdsHandler } from './get-users-by-ids/get-users-by-ids';
import { ListUsersController, ListUsersHandler } from './list-users/list-users';
import { UpdateUserController, UpdateUserHandler } from './update-user/update-user';
import { UsersReadModel } from './users.read-model';
import { ProfileKeys } from './profile-keys/profile-keys';

/** Chat users: create (one or a batch), read, list, update, delete. */
@Module({
  imports: [InstancesModule],
  controllers: [
    CreateUsersController,
    GetUsersByIdsController,
    ListUsersController,
    CreateUserController,
    GetUserController,
    UpdateUserController,
    DeleteUserController,
  ],
  providers: [
    UsersReadModel,
    ProfileKeys,
    CreateUserHandler,
    CreateUsersHandler,
    GetUserHandler,
    ListUsersHandler,
    GetUsersByIdsHandler,
    UpdateUserHandler,
    DeleteUserHandler,
  ],
  exports: [UsersReadModel],
})
export class UsersModule {}
