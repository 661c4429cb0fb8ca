import { Controller, Get, HttpCode, Param } from '@nestjs/common';
import { roleKey, roleNotFound } from '../domain/roles.decider';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE, requireScope } from '../roles-route';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/** GET /roles/:name/scope/:scope/permissions: the role's permission names (201, as the spec lists). */
@Controller(AUTHORIZER_ROUTE)
export class GetRolePermissionsController {
  constructor(private readonly permissions: RolePermissions) {}

  @Get('roles/:roleName/scope/:scope/permissions')
  @Requires(Access.su)
  @HttpCode(201)
  async get(
    @Param('instanceId') instanceId: string,
    @Param('roleName') name: string,
    @Param('scope') rawScope: string,
  ): Promise<readonly string[]> {
    const scope = requireScope(rawScope);
    const role = (await this.permissions.catalogue(instanceId)).roles.get(roleKey(scope, name));
    if (!role) throw roleNotFound(name, scope);
    return role.permissions;
  }
}
