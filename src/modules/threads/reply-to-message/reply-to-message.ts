import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { badRequest, unprocessable } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagePart } from '../../messages/domain/message-parts';
import { messageDecider, messageStream } from '../../messages/domain/message.decider';
import { MessageContent } from '../../messages/message-content';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { SendMessageCommand } from '../../messages/send-message-command';
import { SentMessages } from '../../messages/sent-messages';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parentIsReply, parentNotFound } from '../thread-errors';
import { THREAD_READS } from '../threads.read-model';
import { ShadowBanned } from '../../bans/shadow-banned.decorator';

export class ReplyToMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly parentId: number,
    readonly userId: string,
    readonly parts: MessagePart[],
    readonly alsoInRoom: boolean,
    readonly requester: RequestActor,
    readonly actor: Actor,
    /** Sent under a shadow ban (as the access check found): in no thread but its sender's view of the room. */
    readonly shadow = false,
  ) {}
}

/**
 * Sends a reply in the thread of a message of the same room: a message of the room's timeline
 * that names its parent (the send's own checks and sequence, through SendMessageCommand). The
 * parent must be the room's (this incarnation's), not deleted, and no reply itself: threads are
 * one level deep, as Slack's and Stream's are, so a reply to a reply is refused (reply to its parent).
 */
@CommandHandler(ReplyToMessageCommand)
export class ReplyToMessageHandler implements ICommandHandler<ReplyToMessageCommand, number> {
  constructor(
    private readonly commands: CommandBus,
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
  ) {}

  async execute(c: ReplyToMessageCommand): Promise<number> {
    const room = await this.access.readable(c.instanceId, c.roomId, c.requester);
    const parent = await this.sentMessages.find(c.instanceId, c.roomId, c.parentId);
    if (!parent || parent.roomCreatedAt !== room.createdAt) throw parentNotFound(c.parentId, c.roomId);
    if (parent.parentId !== undefined) throw parentIsReply(c.parentId, parent.parentId);
    const { state } = await this.pipeline.load(messageStream(c.instanceId, c.parentId), messageDecider);
    if (state.deleted) throw parentNotFound(c.parentId, c.roomId);
    return this.commands.execute(
      new SendMessageCommand(
        c.instanceId,
        c.roomId,
        c.userId,
        c.parts,
        c.actor,
        c.requester.su,
        { parentId: c.parentId, parentUserId: parent.userId, alsoInRoom: c.alsoInRoom },
        THREAD_READS,
        c.shadow,
      ),
    );
  }
}

/**
 * `POST …/rooms/:roomId/messages/:messageId/replies` with a v6 message (`{parts}`) and
 * optionally `also_in_room: true`; answers 201 `{message_id}` as a send does. A route of its
 * own rather than a field of the send: the original SDKs never reach it, and a reply's
 * refusals (unknown parent, a reply to a reply) have their own place.
 */
@Controller(CHATKIT_V6_ROUTE)
export class ReplyToMessageController {
  constructor(
    private readonly commands: CommandBus,
    private readonly content: MessageContent,
  ) {}

  @Post('rooms/:roomId/messages/:messageId/replies')
  @Requires(Access.permission('message:create', { room: 'roomId' }))
  @HttpCode(201)
  async reply(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
    @ShadowBanned() shadow: boolean,
  ): Promise<{ message_id: number }> {
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) to reply as');
    const parentId = parseMessageId(rawId);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalid_body', 'The body is a JSON object: {parts, also_in_room?}');
    const { also_in_room: alsoInRoom, ...message } = body as Record<string, unknown>;
    if (alsoInRoom !== undefined && typeof alsoInRoom !== 'boolean') throw unprocessable('invalid_also_in_room', 'also_in_room is true or false');
    const parts = await this.content.parse(6, instanceId, roomId, message);
    const id: number = await this.commands.execute(
      new ReplyToMessageCommand(instanceId, roomId, parentId, actor.userId, parts, alsoInRoom === true, actor, auditActor(actor), shadow),
    );
    return { message_id: id };
  }
}
