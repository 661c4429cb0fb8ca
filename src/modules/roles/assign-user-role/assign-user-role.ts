import { Body, Controller, Param, Put, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roleKey, roleNotFound } from '../domain/roles.decider';
import { RoleCommands } from '../role-commands';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE, requireName } from '../roles-route';
import { UserRoleTargets } from '../user-role-targets';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/**
 * PUT /users/:userId/roles `{name, room_id?}`: the user's global role (replacing the one it
 * had, `default` at first) or its role in a room. 201 when it changed, 200 when it already held it.
 */
@Controller(AUTHORIZER_ROUTE)
export class AssignUserRoleController {
  constructor(
    private readonly commands: RoleCommands,
    private readonly permissions: RolePermissions,
    private readonly targets: UserRoleTargets,
  ) {}

  @Put('users/:userId/roles')
  @Requires(Access.su)
  async assign(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @Body() body: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const name = requireName(body.name, 'name');
    const roomId = body.room_id === undefined || body.room_id === null ? undefined : requireName(body.room_id, 'room_id');
    const scope = roomId === undefined ? 'global' : 'room';
    const role = (await this.permissions.catalogue(instanceId)).roles.get(roleKey(scope, name));
    if (!role) throw roleNotFound(name, scope);
    const userCreatedAt = await this.targets.requireUser(instanceId, userId);
    if (roomId !== undefined) await this.targets.requireRoom(instanceId, roomId);
    const changed = await this.commands.userRoles(
      instanceId,
      userId,
      { type: 'AssignRole', user_id: userId, user_created_at: userCreatedAt, role, ...(roomId !== undefined && { room_id: roomId }) },
      auditActor(actor),
    );
    void reply.status(changed ? 201 : 200);
  }
}
