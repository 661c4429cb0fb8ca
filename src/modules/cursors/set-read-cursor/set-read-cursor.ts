import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { IsInt, Max, Min } from '../../../shared/http/class-validator-parts';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { newestFirst, StreamReader } from '../../../shared/application/write-path/stream-position-search';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { callerOf, RoomAccess } from '../../rooms/room-access';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { CURSORS_ROUTE } from '../cursors-route';
import { cursorDecider, cursorStream, legacyCursorStream, RoomCursor, roomCursorOf } from '../domain/cursor.decider';
import { ReadCursorSet } from '../domain/cursor.events';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

class SetReadCursorDto {
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  position: number;
}

export class SetReadCursorCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly position: number,
    readonly actor: Actor,
  ) {}
}

/** Events read per step when a legacy per-user stream is read backwards to a room's newest set. */
const LEGACY_PAGE = 64;

/**
 * Moves a user's read cursor in a room forward. The user and the room must exist (read from
 * their streams, whose `created_at` tells a re-created user or room apart), and a private room
 * be the caller's; a position at or below the current one is accepted and changes nothing.
 */
@CommandHandler(SetReadCursorCommand)
export class SetReadCursorHandler implements ICommandHandler<SetReadCursorCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userId, position, actor }: SetReadCursorCommand): Promise<void> {
    const visibleRoom = this.access.readable(instanceId, roomId, callerOf(actor));
    visibleRoom.catch(() => undefined); // answered below, after the user's own check
    const user = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!user.state.exists) throw userNotFound(userId);
    const room = await visibleRoom;
    const stream = cursorStream(instanceId, userId, roomId);
    const cursor = await this.pipeline.load(stream, cursorDecider);
    // A cursor the room's stream does not hold yet may still be in the user's legacy stream; once
    // the room's stream has a set, the legacy one is never read again for that room. (Should
    // another writer create the stream meanwhile, the run folds its set, which supersedes this.)
    const legacy = cursor.revision < 0 ? await this.legacyCursor(instanceId, userId, roomId) : null;
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      stream,
      cursorDecider,
      {
        type: 'SetReadCursor',
        room_id: roomId,
        user_id: userId,
        position,
        legacy,
        user_created_at: user.state.createdAt!,
        room_created_at: room.createdAt,
        now,
      },
      { instance_id: instanceId, actor, occurred_at: now },
    );
  }

  /**
   * The newest set of the room in the user's legacy per-user stream (read backwards, so only
   * the sets made after it are read), or null. Legacy streams no longer grow. Events an instance
   * wipe left behind need no special case: they name an earlier user's or room's `created_at`.
   */
  private async legacyCursor(instanceId: string, userId: string, roomId: string): Promise<RoomCursor | null> {
    const read: StreamReader = (stream, options) => this.pipeline.readStream(stream, options);
    for await (const event of newestFirst(read, legacyCursorStream(instanceId, userId), LEGACY_PAGE)) {
      const data = event.data as ReadCursorSet['data'];
      if (event.type === 'ReadCursorSet' && data.room_id === roomId) return roomCursorOf(data);
    }
    return null;
  }
}

@Controller(CURSORS_ROUTE)
export class SetReadCursorController {
  constructor(private readonly commands: CommandBus) {}

  @Put('cursors/0/rooms/:roomId/users/:userId')
  @Requires(Access.permission('cursors:read:set', { room: 'roomId', self: 'userId' }))
  @HttpCode(201)
  async set(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('userId') userId: string,
    @Body() body: SetReadCursorDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<Record<string, never>> {
    await this.commands.execute(new SetReadCursorCommand(instanceId, roomId, userId, body.position, auditActor(actor)));
    return {};
  }
}
