import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { RoomUserIdsDto } from '../add-room-members/add-room-members';
import { callerOf, RoomAccess } from '../room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class RemoveRoomMembersCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userIds: string[],
    readonly actor: Actor,
  ) {}
}

/** Removes users from a room (by a member, a holder of a role in it, or su); ids that are not members are ignored. */
@CommandHandler(RemoveRoomMembersCommand)
export class RemoveRoomMembersHandler implements ICommandHandler<RemoveRoomMembersCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userIds, actor }: RemoveRoomMembersCommand): Promise<void> {
    await this.access.manageable(instanceId, roomId, callerOf(actor));
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, roomId),
      roomDecider,
      { type: 'RemoveMembers', id: roomId, user_ids: userIds, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

@Controller(CHATKIT_ROUTE)
export class RemoveRoomMembersController {
  constructor(private readonly commands: CommandBus) {}

  @Put('rooms/:roomId/users/remove')
  @Requires(Access.permission('room:members:remove', { room: 'roomId' }))
  @HttpCode(204)
  async remove(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Body() body: RoomUserIdsDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new RemoveRoomMembersCommand(instanceId, roomId, body.user_ids, auditActor(actor)));
  }
}
