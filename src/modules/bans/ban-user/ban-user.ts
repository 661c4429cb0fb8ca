import { Body, Controller, Delete, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { BanResponse, BanTerms, parseBanTerms, presentBan } from '../ban-terms';
import { instanceRestrictionsStream, restrictionsDecider, roomRestrictionsStream, standingBan } from '../domain/restrictions.decider';

/** A ban (`terms`) or its lifting (`terms` undefined) of `userId`, in a room or (no `roomId`) the whole instance. */
export class BanUserCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string | undefined,
    readonly userId: string,
    readonly terms: BanTerms | undefined,
    readonly requester: RequestActor,
    readonly actor: Actor,
  ) {}
}

/**
 * Bans (or lifts the ban of) a user incarnation on the room's restrictions stream or the
 * instance's. The user must exist; the room too, for a room ban (its incarnation is recorded,
 * so a room created again with the same id starts with no bans). Answers the ban as it stands.
 */
@CommandHandler(BanUserCommand)
export class BanUserHandler implements ICommandHandler<BanUserCommand, BanResponse | void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: BanUserCommand): Promise<BanResponse | void> {
    const room = c.roomId === undefined ? undefined : await this.access.room(c.instanceId, c.roomId);
    const { state: user } = await this.pipeline.load(userStream(c.instanceId, c.userId), userDecider);
    if (!user.exists) throw userNotFound(c.userId);
    const now = this.clock.now().toISOString();
    const stream = c.roomId === undefined ? instanceRestrictionsStream(c.instanceId) : roomRestrictionsStream(c.instanceId, c.roomId);
    const scope = { ...(c.roomId !== undefined && { roomId: c.roomId, roomCreatedAt: room!.createdAt }), userId: c.userId, userCreatedAt: user.createdAt!, now };
    const bannedBy = c.requester.userId;
    const { state } = await this.pipeline.run(
      stream,
      restrictionsDecider,
      c.terms
        ? { type: 'BanUser', ...scope, ...c.terms, ...(bannedBy !== undefined && { bannedBy }) }
        : { type: 'UnbanUser', ...scope },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
    );
    if (!c.terms) return;
    return presentBan(standingBan(state, c.userId, user.createdAt, room?.createdAt, now)!, c.roomId);
  }
}

/**
 * `PUT` bans a user from the room (`{reason?, until?, shadow?}`: 200 with the ban), `DELETE`
 * lifts the ban (204, also when there was none). Permission `room:ban` in the room, or su.
 */
@Controller(CHATKIT_V6_ROUTE)
export class RoomBansController {
  constructor(private readonly commands: CommandBus) {}

  @Put('rooms/:roomId/bans/:userId')
  @Requires(Access.permission('room:ban', { room: 'roomId' }))
  ban(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('userId') userId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<BanResponse> {
    const terms = parseBanTerms(body);
    return this.commands.execute(new BanUserCommand(instanceId, roomId, userId, terms, actor, auditActor(actor)));
  }

  @Delete('rooms/:roomId/bans/:userId')
  @Requires(Access.permission('room:ban', { room: 'roomId' }))
  @HttpCode(204)
  async unban(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @Param('userId') userId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new BanUserCommand(instanceId, roomId, userId, undefined, actor, auditActor(actor)));
  }
}

/** Instance bans (every room, every write): su only, under Parley's administration API. */
@Controller(PARLEY_ADMIN_ROUTE)
export class InstanceBansController {
  constructor(private readonly commands: CommandBus) {}

  @Put('bans/:userId')
  @Requires(Access.su)
  ban(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Body() body: unknown, @CurrentActor() actor: RequestActor): Promise<BanResponse> {
    const terms = parseBanTerms(body);
    return this.commands.execute(new BanUserCommand(instanceId, undefined, userId, terms, actor, auditActor(actor)));
  }

  @Delete('bans/:userId')
  @Requires(Access.su)
  @HttpCode(204)
  async unban(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    await this.commands.execute(new BanUserCommand(instanceId, undefined, userId, undefined, actor, auditActor(actor)));
  }
}
