import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoleCommands } from '../role-commands';
import { AUTHORIZER_ROUTE, requireName, requireScope, requireStringArray } from '../roles-route';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/** POST /roles: a global or room role with its permissions; a duplicate name in the scope is a 409. */
@Controller(AUTHORIZER_ROUTE)
export class CreateRoleController {
  constructor(private readonly commands: RoleCommands) {}

  @Post('roles')
  @Requires(Access.su)
  @HttpCode(201)
  async create(
    @Param('instanceId') instanceId: string,
    @Body() body: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const name = requireName(body.name, 'name');
    const scope = requireScope(body.scope);
    const permissions = requireStringArray(body.permissions, 'permissions');
    await this.commands.catalogue(instanceId, { type: 'CreateRole', name, scope, permissions, role_id: randomUUID() }, auditActor(actor));
  }
}
