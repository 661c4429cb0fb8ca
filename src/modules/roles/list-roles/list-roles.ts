import { Controller, Get, Param } from '@nestjs/common';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE } from '../roles-route';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

export interface RoleRecord {
  readonly name: string;
  readonly permissions: readonly string[];
  readonly scope: string;
}

/** GET /roles: every role of the instance, the built-in ones included. */
@Controller(AUTHORIZER_ROUTE)
export class ListRolesController {
  constructor(private readonly permissions: RolePermissions) {}

  @Get('roles')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string): Promise<RoleRecord[]> {
    const { roles } = await this.permissions.catalogue(instanceId);
    return [...roles.values()].map((r) => ({ name: r.name, permissions: r.permissions, scope: r.scope }));
  }
}
