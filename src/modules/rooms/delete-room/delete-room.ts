import { Controller, Delete, HttpCode, Inject, Param, UseGuards } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import {
  AccessTokenGuard,
  auditActor,
  CurrentActor,
} from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';

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
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, actor }: DeleteRoomCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, roomId),
      roomDecider,
      { type: 'DeleteRoom', id: roomId, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

/** Needs su or the room:delete permission (the default role lacks it): checked by the roles module's route table. */
@Controller(CHATKIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class DeleteRoomController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('rooms/:roomId')
  @HttpCode(204)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new DeleteRoomCommand(instanceId, roomId, auditActor(actor)));
  }
}
