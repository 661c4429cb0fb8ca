import { Body, Controller, Get, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { IsInt, Max, Min } from '../../../shared/http/class-validator-parts';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { notFound } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { callerOf, RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { threadCursorDecider, threadCursorStream } from '../domain/thread-cursor.decider';
import { parentIsReply, parentNotFound } from '../thread-errors';
import { messageOrReply, THREAD_READS, ThreadsReadModel } from '../threads.read-model';

class SetThreadCursorDto {
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  position: number;
}

export class SetThreadCursorCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly parentId: number,
    readonly userId: string,
    readonly position: number,
    readonly actor: Actor,
  ) {}
}

/**
 * Moves a user's read cursor in a thread forward (a position at or below it changes nothing),
 * as a room's cursor moves. The user must exist, the room be the caller's to read, and the
 * thread's first message be a message of the room (no reply: a reply has no thread of its own)
 * or a thread have replies.
 */
@CommandHandler(SetThreadCursorCommand)
export class SetThreadCursorHandler implements ICommandHandler<SetThreadCursorCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly threads: ThreadsReadModel,
    private readonly messages: MessagesReadModel,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: SetThreadCursorCommand): Promise<void> {
    const room = await this.access.readable(c.instanceId, c.roomId, callerOf(c.actor));
    const user = await this.pipeline.load(userStream(c.instanceId, c.userId), userDecider);
    if (!user.state.exists) throw userNotFound(c.userId);
    const [thread, parent] = await Promise.all([
      this.threads.thread(c.instanceId, c.roomId, c.parentId),
      messageOrReply(this.messages, this.threads, c.instanceId, c.roomId, c.parentId),
    ]);
    if (!thread && !parent) throw parentNotFound(c.parentId, c.roomId);
    if (parent?.parent_id !== undefined) throw parentIsReply(c.parentId, parent.parent_id);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      threadCursorStream(c.instanceId, c.parentId, c.userId),
      threadCursorDecider,
      { type: 'SetThreadCursor', roomId: c.roomId, roomCreatedAt: room.createdAt, parentId: c.parentId, userId: c.userId, position: c.position, now },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
      { awaitProjections: THREAD_READS },
    );
  }
}

export interface ThreadCursorResponse {
  readonly room_id: string;
  readonly parent_id: number;
  readonly user_id: string;
  readonly position: number;
  readonly updated_at: string;
}

/**
 * A user's read cursor in a thread: `PUT …/rooms/:roomId/messages/:messageId/replies/read_cursors/:userId`
 * (`{position}`: a reply id; the user themselves or su, with `cursors:read:set`) and `GET` of
 * the same (`cursors:read:get`). The room's own cursor (the cursors API) is another.
 */
@Controller(CHATKIT_V6_ROUTE)
export class ThreadCursorController {
  constructor(
    private readonly commands: CommandBus,
    private readonly access: RoomAccess,
    private readonly threads: ThreadsReadModel,
  ) {}

  @Put('rooms/:roomId/messages/:messageId/replies/read_cursors/:userId')
  @Requires(Access.permission('cursors:read:set', { room: 'roomId', self: 'userId' }))
  @HttpCode(204)
  async set(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Param('userId') userId: string,
    @Body() body: SetThreadCursorDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    const parentId = parseMessageId(rawId);
    await this.commands.execute(new SetThreadCursorCommand(instanceId, roomId, parentId, userId, body.position, auditActor(actor)));
  }

  @Get('rooms/:roomId/messages/:messageId/replies/read_cursors/:userId')
  @Requires(Access.permission('cursors:read:get', { room: 'roomId' }))
  async get(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Param('userId') userId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<ThreadCursorResponse> {
    const parentId = parseMessageId(rawId);
    await this.access.readable(instanceId, roomId, actor);
    const doc = await this.threads.cursor(instanceId, roomId, parentId, userId);
    if (!doc) throw notFound('cursor_not_found', `${userId} has no read cursor in the thread of ${parentId}`);
    return { room_id: doc.room_id, parent_id: doc.parent_id, user_id: doc.user_id, position: doc.position, updated_at: doc.updated_at };
  }
}
