import { Controller, Delete, HttpCode, Param, Query } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { liveRole } from '../domain/user-roles.decider';
import { RoleCommands } from '../role-commands';
import { RolePermissions } from '../role-permissions';
import { AUTHORIZER_ROUTE, requireName } from '../roles-route';
import { UserRoleTargets } from '../user-role-targets';
import { Access } from '../access-rules';
import { Requires } from '../requires.decorator';

/** DELETE /users/:userId/roles[?room_id=]: the user's global role (back to `default`), or its role in the room. */
@Controller(AUTHORIZER_ROUTE)
export class RemoveUserRoleController {
  constructor(
    private readonly commands: RoleCommands,
    private readonly permissions: RolePermissions,
    private readonly targets: UserRoleTargets,
  ) {}

  @Delete('users/:userId/roles')
  @Requires(Access.su)
  @HttpCode(204)
  async remove(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @Query('room_id') rawRoomId: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const roomId = rawRoomId === undefined ? undefined : requireName(rawRoomId, 'room_id');
    const userCreatedAt = await this.targets.requireUser(instanceId, userId);
    const [catalogue, user] = await Promise.all([
      this.permissions.catalogue(instanceId),
      this.permissions.userRoles(instanceId, userId),
    ]);
    const current = roomId === undefined ? user.global : user.rooms.get(roomId);
    await this.commands.userRoles(
      instanceId,
      userId,
      {
        type: 'RemoveRole',
        user_id: userId,
        user_created_at: userCreatedAt,
        live: liveRole(catalogue, current, roomId !== undefined) !== null,
        ...(roomId !== undefined && { room_id: roomId }),
      },
      auditActor(actor),
    );
  }
}
