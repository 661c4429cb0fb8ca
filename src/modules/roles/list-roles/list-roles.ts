import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE } from '../roles-route';

export interface RoleRecord {
  readonly name: string;
  readonly permissions: readonly string[];
  readonly scope: string;
}

/** GET /roles: every role of the instance, the built-in ones included. */
@Controller(AUTHORIZER_ROUTE)
@UseGuards(AccessTokenGuard)
export class ListRolesController {
  constructor(private readonly permissions: RolePermissions) {}

  @Get('roles')
  async list(@Param('instanceId') instanceId: string, @CurrentActor() actor: RequestActor): Promise<RoleRecord[]> {
    requireSu(actor);
    const { roles } = await this.permissions.catalogue(instanceId);
    return [...roles.values()].map((r) => ({ name: r.name, permissions: r.permissions, scope: r.scope }));
  }
}
