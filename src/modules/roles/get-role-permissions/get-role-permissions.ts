import { Controller, Get, HttpCode, Param, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roleKey, roleNotFound } from '../domain/roles.decider';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE, requireScope } from '../roles-route';

/** GET /roles/:name/scope/:scope/permissions: the role's permission names (201, as the spec lists). */
@Controller(AUTHORIZER_ROUTE)
@UseGuards(AccessTokenGuard)
export class GetRolePermissionsController {
  constructor(private readonly permissions: RolePermissions) {}

  @Get('roles/:roleName/scope/:scope/permissions')
  @HttpCode(201)
  async get(
    @Param('instanceId') instanceId: string,
    @Param('roleName') name: string,
    @Param('scope') rawScope: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<readonly string[]> {
    requireSu(actor);
    const scope = requireScope(rawScope);
    const role = (await this.permissions.catalogue(instanceId)).roles.get(roleKey(scope, name));
    if (!role) throw roleNotFound(name, scope);
    return role.permissions;
  }
}
