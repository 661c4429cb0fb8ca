import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoleCommands } from '../role-commands';
import { AUTHORIZER_ROUTE, requireScope } from '../roles-route';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/** DELETE /roles/:name/scope/:scope: the role and every assignment of it end together. */
@Controller(AUTHORIZER_ROUTE)
export class DeleteRoleController {
  constructor(private readonly commands: RoleCommands) {}

  @Delete('roles/:roleName/scope/:scope')
  @Requires(Access.su)
  @HttpCode(204)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('roleName') name: string,
    @Param('scope') rawScope: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.catalogue(instanceId, { type: 'DeleteRole', name, scope: requireScope(rawScope) }, auditActor(actor));
  }
}
