import { Global, Module, OnModuleInit } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { SubscriptionRoutes } from '../streaming/subscription-routes';
import { AssignUserRoleController } from './assign-user-role/assign-user-role';
import { CreateRoleController } from './create-role/create-role';
import { DeleteRoleController } from './delete-role/delete-role';
import { GetRolePermissionsController } from './get-role-permissions/get-role-permissions';
import { ListRolesController } from './list-roles/list-roles';
import { ListUserRolesController } from './list-user-roles/list-user-roles';
import { RoutePermissionCheck, subscriptionPermissionCheck } from './permission-check';
import { REQUEST_PERMISSIONS } from '../instances/authentication/request-permissions';
import { RemoveUserRoleController } from './remove-user-role/remove-user-role';
import { RoleCommands } from './role-commands';
import { RolePermissions } from './role-permissions';
import { UpdateRolePermissionsController } from './update-role-permissions/update-role-permissions';
import { UserRoleTargets } from './user-role-targets';

/**
 * Roles and permissions: the authorizer API, and the check of every non-su call against the
 * caller's roles (HTTP through one interceptor, subscriptions through the subscription
 * registry), both driven by ROUTE_PERMISSIONS. `RolePermissions.wiped` serves the instance wipe.
 */
// Global: the token guard of every context asks its permission check (REQUEST_PERMISSIONS).
@Global()
@Module({
  imports: [InstancesModule],
  controllers: [
    CreateRoleController,
    ListRolesController,
    DeleteRoleController,
    AssignUserRoleController,
    ListUserRolesController,
    RemoveUserRoleController,
    GetRolePermissionsController,
    UpdateRolePermissionsController,
  ],
  providers: [
    RolePermissions,
    RoleCommands,
    UserRoleTargets,
    { provide: REQUEST_PERMISSIONS, useClass: RoutePermissionCheck },
  ],
  exports: [RolePermissions, RoleCommands, REQUEST_PERMISSIONS],
})
export class RolesModule implements OnModuleInit {
  constructor(
    private readonly permissions: RolePermissions,
    private readonly subscriptions: SubscriptionRoutes,
  ) {}

  onModuleInit(): void {
    this.subscriptions.authorizeWith(subscriptionPermissionCheck(this.permissions));
  }
}
