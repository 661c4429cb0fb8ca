import { Controller, Get, Param } from '@nestjs/common';
import { globalRoleOf, liveRole } from '../domain/user-roles.decider';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE } from '../roles-route';
import { UserRoleTargets } from '../user-role-targets';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

export interface UserRoleRecord {
  readonly role_name: string;
  readonly permissions: readonly string[];
  readonly scope: 'global' | 'room';
  readonly room_id?: string;
}

/** GET /users/:userId/roles: its global role (`default` unless another was assigned), then its room roles. */
@Controller(AUTHORIZER_ROUTE)
export class ListUserRolesController {
  constructor(
    private readonly permissions: RolePermissions,
    private readonly targets: UserRoleTargets,
  ) {}

  @Get('users/:userId/roles')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
  ): Promise<UserRoleRecord[]> {
    await this.targets.requireUser(instanceId, userId);
    const [catalogue, user] = await Promise.all([
      this.permissions.catalogue(instanceId),
      this.permissions.userRoles(instanceId, userId),
    ]);
    const records: UserRoleRecord[] = [];
    const global = globalRoleOf(catalogue, user);
    if (global) records.push({ role_name: global.name, permissions: global.permissions, scope: 'global' });
    for (const [roomId, assignment] of user.rooms) {
      const role = liveRole(catalogue, assignment, true);
      if (role) records.push({ role_name: role.name, permissions: role.permissions, scope: 'room', room_id: roomId });
    }
    return records;
  }
}
