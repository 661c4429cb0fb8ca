import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes, randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { forbidden } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersion, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { validateBody } from '../../../shared/http/validation';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { roomDecider, roomStream } from '../domain/room.decider';
import { presentRoom, RoomResponse } from '../presentation/room.presenter';
import { CreateRoomDto, V2CreateRoomDto } from '../presentation/room-fields';
import { RoomMembers } from '../room-members';
import { RoomsReadModel } from '../rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class CreateRoomCommand {
  constructor(
    readonly instanceId: string,
    readonly version: ChatApiVersion,
    readonly fields: CreateRoomDto,
    readonly creatorId: string | undefined,
    readonly actor: Actor,
  ) {}
}

@CommandHandler(CreateRoomCommand)
export class CreateRoomHandler implements ICommandHandler<CreateRoomCommand, RoomResponse> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly members: RoomMembers,
    private readonly rooms: RoomsReadModel,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, version, fields, creatorId, actor }: CreateRoomCommand): Promise<RoomResponse> {
    const id = (version === 6 && fields.id) || randomUUID();
    // One lookup for the creator and the members (the creator comes first; repeats collapse).
    const resolved = await this.members.resolve(instanceId, [...(creatorId ? [creatorId] : []), ...(fields.user_ids ?? [])]);
    const creator = creatorId ? resolved[0] : undefined;
    const members = creatorId ? resolved.slice(1) : resolved;
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      roomStream(instanceId, id),
      roomDecider,
      {
        type: 'CreateRoom',
        id,
        // An empty body makes a public room with a generated name (seed, rooms rule 1).
        name: fields.name ?? `room-${randomBytes(4).toString('hex')}`,
        private: fields.private ?? false,
        created_by: creator,
        members,
        custom_data: fields.custom_data,
        push_notification_title_override: fields.push_notification_title_override ?? undefined,
        now,
      },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    const room = await this.rooms.get(instanceId, id);
    return presentRoom(version, room, version === 6 ? await this.rooms.memberIds(instanceId, id) : undefined);
  }
}

@Controller(CHATKIT_ROUTE)
export class CreateRoomController {
  constructor(private readonly commands: CommandBus) {}

  /** The body is read by API version: v2 room names keep the seed's charset, v6 ones are free text. */
  @Post('rooms')
  @Requires(Access.permission('room:create'))
  @HttpCode(201)
  async create(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) version: ChatApiVersion,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<RoomResponse> {
    const fields = await validateBody(version === 2 ? V2CreateRoomDto : CreateRoomDto, body);
    const creatorId = fields.created_by_id ?? actor.userId;
    if (creatorId !== undefined && creatorId !== actor.userId && !actor.su) {
      throw forbidden('not_allowed', 'A room can only be created on behalf of the token\'s own user without su');
    }
    return this.commands.execute(new CreateRoomCommand(instanceId, version, fields, creatorId, auditActor(actor)));
  }
}
