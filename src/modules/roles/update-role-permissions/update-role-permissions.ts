import { Body, Controller, HttpCode, Param, Put } from '@nestjs/common';
import { badRequest } from '../../../shared/domain/errors';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoleCommands } from '../role-commands';
import { AUTHORIZER_ROUTE, requireScope, requireStringArray } from '../roles-route';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/** PUT /roles/:name/scope/:scope/permissions: `add_permissions` and/or `remove_permissions`, at least one not empty. */
@Controller(AUTHORIZER_ROUTE)
export class UpdateRolePermissionsController {
  constructor(private readonly commands: RoleCommands) {}

  @Put('roles/:roleName/scope/:scope/permissions')
  @Requires(Access.su)
  @HttpCode(204)
  async update(
    @Param('instanceId') instanceId: string,
    @Param('roleName') name: string,
    @Param('scope') rawScope: string,
    @Body() body: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const scope = requireScope(rawScope);
    const add = body.add_permissions === undefined ? [] : requireStringArray(body.add_permissions, 'add_permissions');
    const remove = body.remove_permissions === undefined ? [] : requireStringArray(body.remove_permissions, 'remove_permissions');
    if (add.length === 0 && remove.length === 0) {
      throw badRequest('invalid_parameters', 'At least one of "add_permissions" and "remove_permissions" must name a permission');
    }
    await this.commands.catalogue(instanceId, { type: 'ChangeRolePermissions', name, scope, add, remove }, auditActor(actor));
  }
}
