import { Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { answerShows } from '../../../shared/application/write-path/idempotency-guards';
import { dataKeyIds } from '../../../shared/domain/personal-data';
import { requestIdOf } from '../../../shared/observability/request-context';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { RoomAccess } from '../room-access';
import { presentRoom, RoomResponse } from '../presentation/room.presenter';
import { RoomMembers } from '../room-members';
import { RoomsReadModel } from '../rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class JoinRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly roomId: string,
    readonly userId: string,
    readonly actor: Actor,
  ) {}
}

/** A user enters a public room (private rooms admit only users added to them). Joining twice is fine. */
@CommandHandler(JoinRoomCommand)
export class JoinRoomHandler implements ICommandHandler<JoinRoomCommand, RoomResponse> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly members: RoomMembers,
    private readonly access: RoomAccess,
    private readonly rooms: RoomsReadModel,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, version, roomId, userId, actor }: JoinRoomCommand): Promise<RoomResponse> {
    const stream = roomStream(instanceId, roomId);
    // Before any user is looked up: a missing room, or a private one the user is not in, is room_not_found.
    await this.access.readable(instanceId, roomId, { userId, su: actor.su === true });
    const members = await this.members.resolve(instanceId, [userId]);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      stream,
      roomDecider,
      { type: 'AddMembers', id: roomId, members, join: true, su: actor.su === true, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    const room = await this.rooms.get(instanceId, roomId);
    // The answer shows the room's name and custom data: a stored answer of it goes with them.
    answerShows(requestIdOf(actor), [dataKeyIds.room(instanceId, roomId, room.created_at)]);
    return presentRoom(version, room, await this.rooms.memberIds(instanceId, roomId));
  }
}

@Controller(CHATKIT_ROUTE)
export class JoinRoomController {
  constructor(private readonly commands: CommandBus) {}

  @Post('users/:userId/rooms/:roomId/join')
  @Requires(Access.permission('room:join', { room: 'roomId', self: 'userId' }))
  @HttpCode(200)
  join(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Param('userId') userId: string,
    @Param('roomId') roomId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<RoomResponse> {
    return this.commands.execute(new JoinRoomCommand(instanceId, version, roomId, userId, auditActor(actor)));
  }
}
