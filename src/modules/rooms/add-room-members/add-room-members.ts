import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString } from '../../../shared/http/class-validator-parts';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { callerOf, RoomAccess } from '../room-access';
import { RoomMembers } from '../room-members';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export const MAX_MEMBERS_PER_CALL = 500;

export class RoomUserIdsDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MEMBERS_PER_CALL)
  @IsString({ each: true })
  user_ids: string[];
}

export class AddRoomMembersCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userIds: string[],
    readonly actor: Actor,
  ) {}
}

/** Adds existing users to a room (by a member, a holder of a role in it, or su); users already in it are left as they are. */
@CommandHandler(AddRoomMembersCommand)
export class AddRoomMembersHandler implements ICommandHandler<AddRoomMembersCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly members: RoomMembers,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userIds, actor }: AddRoomMembersCommand): Promise<void> {
    const stream = roomStream(instanceId, roomId);
    // Before any user is looked up: a missing room (or a private one the caller is not in) is room_not_found.
    await this.access.manageable(instanceId, roomId, callerOf(actor));
    const members = await this.members.resolve(instanceId, userIds);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      stream,
      roomDecider,
      { type: 'AddMembers', id: roomId, members, join: false, su: actor.su === true, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }
}

@Controller(CHATKIT_ROUTE)
export class AddRoomMembersController {
  constructor(private readonly commands: CommandBus) {}

  @Put('rooms/:roomId/users/add')
  @Requires(Access.permission('room:members:add', { room: 'roomId' }))
  @HttpCode(204)
  async add(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Body() body: RoomUserIdsDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new AddRoomMembersCommand(instanceId, roomId, body.user_ids, auditActor(actor)));
  }
}
