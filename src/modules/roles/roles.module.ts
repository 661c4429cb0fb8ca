import { Global, Module, OnModuleInit } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { InstancesModule } from '../instances/instances.module';
import { SubscriptionRoutes } from '../streaming/subscription-routes';
import { AssignUserRoleController } from './assign-user-role/assign-user-role';
import { CreateRoleController } from './create-role/create-role';
import { DeleteRoleController } from './delete-role/delete-role';
import { GetRolePermissionsController } from './get-role-permissions/get-role-permissions';
import { ListRolesController } from './list-roles/list-roles';
import { ListUserRolesController } from './list-user-roles/list-user-roles';
import { AccessCheck } from './access-check';
import { AccessGuard } from './access.guard';
import { DeclaredRoutes } from './declared-routes';
import { RemoveUserRoleController } from './remove-user-role/remove-user-role';
import { RoleCommands } from './role-commands';
import { RolePermissions } from './role-permissions';
import { UpdateRolePermissionsController } from './update-role-permissions/update-role-permissions';
import { UserRoleTargets } from './user-role-targets';
import { Restrictions } from '../bans/restrictions';

/**
 * Roles and permissions: the authorizer API, and the check of every call against what its
 * route declares (`access-rules.ts`): controller routes through the global `AccessGuard`,
 * subscriptions through the subscription registry, raw Fastify routes through
 * `DeclaredRoutes`, which also stops the start while a route declares nothing.
 * `RolePermissions.wiped` serves the instance wipe.
 */
// Global: other contexts check room roles (RolePermissions) and raw routes' callers (AccessCheck).
@Global()
@Module({
  imports: [InstancesModule, DiscoveryModule],
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
    AccessCheck,
    Restrictions,
    DeclaredRoutes,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [RolePermissions, RoleCommands, AccessCheck, Restrictions, DeclaredRoutes],
})
export class RolesModule implements OnModuleInit {
  constructor(
    private readonly access: AccessCheck,
    private readonly subscriptions: SubscriptionRoutes,
  ) {}

  onModuleInit(): void {
    this.subscriptions.authorizeWith(this.access.subscriptions);
  }
}
