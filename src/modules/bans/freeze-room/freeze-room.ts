import { Controller, Delete, Get, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { isFrozen, restrictionsDecider, roomRestrictionsStream } from '../domain/restrictions.decider';

export class FreezeRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly freeze: boolean,
    readonly requester: RequestActor,
    readonly actor: Actor,
  ) {}
}

/** Freezes (read only: every write answers 403 room_frozen, except su's) or unfreezes the room's incarnation; idempotent. */
@CommandHandler(FreezeRoomCommand)
export class FreezeRoomHandler implements ICommandHandler<FreezeRoomCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: FreezeRoomCommand): Promise<void> {
    const room = await this.access.readable(c.instanceId, c.roomId, c.requester);
    const now = this.clock.now().toISOString();
    const base = { roomId: c.roomId, roomCreatedAt: room.createdAt, now };
    const frozenBy = c.requester.userId;
    await this.pipeline.run(
      roomRestrictionsStream(c.instanceId, c.roomId),
      restrictionsDecider,
      c.freeze ? { type: 'FreezeRoom', ...base, ...(frozenBy !== undefined && { frozenBy }) } : { type: 'UnfreezeRoom', ...base },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
    );
  }
}

/** `PUT` freezes the room, `DELETE` unfreezes it (204 both, also when nothing changes); `GET` says whether it is: `{frozen}`. */
@Controller(CHATKIT_V6_ROUTE)
export class FreezeRoomController {
  constructor(
    private readonly commands: CommandBus,
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
  ) {}

  @Put('rooms/:roomId/freeze')
  @Requires(Access.permission('room:freeze', { room: 'roomId' }))
  @HttpCode(204)
  async freeze(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new FreezeRoomCommand(instanceId, roomId, true, actor, auditActor(actor)));
  }

  @Delete('rooms/:roomId/freeze')
  @Requires(Access.permission('room:freeze', { room: 'roomId' }))
  @HttpCode(204)
  async unfreeze(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new FreezeRoomCommand(instanceId, roomId, false, actor, auditActor(actor)));
  }

  @Get('rooms/:roomId/freeze')
  @Requires(Access.permission('room:get', { room: 'roomId' }))
  async get(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor): Promise<{ frozen: boolean }> {
    const room = await this.access.readable(instanceId, roomId, actor);
    const { state } = await this.pipeline.load(roomRestrictionsStream(instanceId, roomId), restrictionsDecider);
    return { frozen: isFrozen(state, room.createdAt) };
  }
}
