import { Controller, Delete, HttpCode, Inject, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { callerOf, RoomAccess } from '../room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class DeleteRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly actor: Actor,
  ) {}
}

/** Deletes a room; projections drop its memberships (and its messages) with it. */
@CommandHandler(DeleteRoomCommand)
export class DeleteRoomHandler implements ICommandHandler<DeleteRoomCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, actor }: DeleteRoomCommand): Promise<void> {
    await this.access.readable(instanceId, roomId, callerOf(actor));
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, roomId),
      roomDecider,
      { type: 'DeleteRoom', id: roomId, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

/** The default role lacks room:delete: admins and su delete rooms. */
@Controller(CHATKIT_ROUTE)
export class DeleteRoomController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('rooms/:roomId')
  @Requires(Access.permission('room:delete', { room: 'roomId' }))
  @HttpCode(204)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new DeleteRoomCommand(instanceId, roomId, auditActor(actor)));
  }
}
