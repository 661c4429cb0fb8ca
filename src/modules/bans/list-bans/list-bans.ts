import { Controller, Get, Inject, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { userDecider, userStream } from '../../users/domain/user.decider';
import { BanResponse, presentBan } from '../ban-terms';
import { instanceRestrictionsStream, restrictionsDecider, roomRestrictionsStream, standingBan } from '../domain/restrictions.decider';

export class ListBansQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string | undefined,
  ) {}
}

/**
 * The bans standing now in a room (or the instance), newest first: read from the restrictions
 * stream the enforcement decides on (a room's or an instance's bans are few, a short stream),
 * so a ban answered is listed at once. Bans of a deleted user incarnation are not listed.
 */
@QueryHandler(ListBansQuery)
export class ListBansHandler implements IQueryHandler<ListBansQuery, { bans: BanResponse[] }> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(q: ListBansQuery): Promise<{ bans: BanResponse[] }> {
    const room = q.roomId === undefined ? undefined : await this.access.room(q.instanceId, q.roomId);
    const stream = q.roomId === undefined ? instanceRestrictionsStream(q.instanceId) : roomRestrictionsStream(q.instanceId, q.roomId);
    const { state } = await this.pipeline.load(stream, restrictionsDecider);
    const now = this.clock.now().toISOString();
    const standing = await Promise.all(
      [...state.bans.keys()].map(async (userId) => {
        const { state: user } = await this.pipeline.load(userStream(q.instanceId, userId), userDecider);
        return standingBan(state, userId, user.createdAt, room?.createdAt, now);
      }),
    );
    const bans = standing.filter((ban) => ban !== undefined).sort((a, b) => (a.bannedAt < b.bannedAt ? 1 : a.bannedAt > b.bannedAt ? -1 : a.userId < b.userId ? -1 : 1));
    return { bans: bans.map((ban) => presentBan(ban, q.roomId)) };
  }
}

/** A room's standing bans: permission `room:ban` in the room (who may ban may see whom), or su. */
@Controller(CHATKIT_V6_ROUTE)
export class ListRoomBansController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/bans')
  @Requires(Access.permission('room:ban', { room: 'roomId' }))
  list(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string): Promise<{ bans: BanResponse[] }> {
    return this.queries.execute(new ListBansQuery(instanceId, roomId));
  }
}

/** The instance's standing bans: su only. */
@Controller(PARLEY_ADMIN_ROUTE)
export class ListInstanceBansController {
  constructor(private readonly queries: QueryBus) {}

  @Get('bans')
  @Requires(Access.su)
  list(@Param('instanceId') instanceId: string): Promise<{ bans: BanResponse[] }> {
    return this.queries.execute(new ListBansQuery(instanceId, undefined));
  }
}
