import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { validateBody } from '../../../shared/http/validation';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { callerOf, RoomAccess } from '../room-access';
import { RoomFieldsDto, V2RoomFieldsDto } from '../presentation/room-fields';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class UpdateRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly changes: RoomFieldsDto,
    readonly actor: Actor,
  ) {}
}

@CommandHandler(UpdateRoomCommand)
export class UpdateRoomHandler implements ICommandHandler<UpdateRoomCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, changes, actor }: UpdateRoomCommand): Promise<void> {
    await this.access.readable(instanceId, roomId, callerOf(actor));
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, roomId),
      roomDecider,
      { type: 'UpdateRoom', id: roomId, ...changes, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

/** The default role lacks room:update: admins and su update rooms. */
@Controller(CHATKIT_ROUTE)
export class UpdateRoomController {
  constructor(private readonly commands: CommandBus) {}

  /** The body is read by API version: v2 room names keep the seed's charset, v6 ones are free text. */
  @Put('rooms/:roomId')
  @Requires(Access.permission('room:update', { room: 'roomId' }))
  @HttpCode(204)
  async update(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('roomId') roomId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const changes = await validateBody(version === 2 ? V2RoomFieldsDto : RoomFieldsDto, body);
    await this.commands.execute(new UpdateRoomCommand(instanceId, roomId, changes, auditActor(actor)));
  }
}
