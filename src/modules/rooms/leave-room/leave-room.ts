import { Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { RoomAccess } from '../room-access';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class LeaveRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly actor: Actor,
  ) {}
}

/** A user leaves a room; leaving a room one is not in changes nothing. */
@CommandHandler(LeaveRoomCommand)
export class LeaveRoomHandler implements ICommandHandler<LeaveRoomCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userId, actor }: LeaveRoomCommand): Promise<void> {
    await this.access.readable(instanceId, roomId, { userId, su: actor.su === true });
    const user = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!user.state.exists) throw userNotFound(userId);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, roomId),
      roomDecider,
      { type: 'RemoveMembers', id: roomId, user_ids: [userId], leave: true, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

@Controller(CHATKIT_ROUTE)
export class LeaveRoomController {
  constructor(private readonly commands: CommandBus) {}

  @Post('users/:userId/rooms/:roomId/leave')
  @Requires(Access.permission('room:leave', { room: 'roomId', self: 'userId' }))
  @HttpCode(200)
  async leave(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new LeaveRoomCommand(instanceId, roomId, userId, auditActor(actor)));
  }
}
