import { Body, Controller, Delete, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest, unprocessable } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { messageDecider, messageNotFound, messageStream, sentShownTo } from '../../messages/domain/message.decider';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { SentMessages } from '../../messages/sent-messages';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { pinsDecider, pinsStream } from '../domain/pins.decider';
import { PIN_READS } from '../pins.read-model';
import { ShadowBanned } from '../../bans/shadow-banned.decorator';

export class PinMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly messageId: number,
    readonly pin: boolean,
    readonly until: string | undefined,
    readonly requester: RequestActor,
    readonly actor: Actor,
    /** Made under a shadow ban (as the access check found): the change shows to its user alone. */
    readonly shadow = false,
  ) {}
}

/**
 * Pins (or unpins) a message of the room on the room's pins stream. A user must be a member of
 * the room; su need not be. Pinning needs the message to be the room's and not deleted;
 * unpinning needs nothing of it (a deleted message's pin went with it already).
 */
@CommandHandler(PinMessageCommand)
export class PinMessageHandler implements ICommandHandler<PinMessageCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: PinMessageCommand): Promise<void> {
    const { userId, su } = c.requester;
    const room = userId !== undefined ? await this.access.writableAs(c.instanceId, c.roomId, userId, su) : await this.access.readable(c.instanceId, c.roomId, c.requester);
    if (c.pin) {
      const sent = await this.sentMessages.find(c.instanceId, c.roomId, c.messageId);
      const { state } = await this.pipeline.load(messageStream(c.instanceId, c.messageId), messageDecider);
      if (!sent || sent.roomCreatedAt !== room.createdAt || state.deleted) throw messageNotFound(c.messageId);
      // A message sent under someone else's shadow ban is not there for the caller (su sees every message).
      if (!su && !sentShownTo(sent, userId)) throw messageNotFound(c.messageId);
    }
    const now = this.clock.now().toISOString();
    const base = { roomId: c.roomId, roomCreatedAt: room.createdAt, messageId: c.messageId, now, ...(c.shadow && { shadow: true }) };
    await this.pipeline.run(
      pinsStream(c.instanceId, c.roomId),
      pinsDecider,
      c.pin
        ? { ...base, type: 'PinMessage', ...(userId !== undefined && { userId }), ...(c.until !== undefined && { until: c.until }) }
        : { ...base, type: 'UnpinMessage', ...(userId !== undefined && { userId }) },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
      { awaitProjections: PIN_READS },
    );
  }
}

/** `PUT` pins a message (`{until?}`: an RFC 3339 time it stops showing), `DELETE` unpins it; both 204, also when nothing changes. */
@Controller(CHATKIT_V6_ROUTE)
export class PinMessageController {
  constructor(private readonly commands: CommandBus) {}

  @Put('rooms/:roomId/messages/:messageId/pin')
  @Requires(Access.permission('message:pin', { room: 'roomId' }))
  @HttpCode(204)
  async pin(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Body() body: unknown,
    @CurrentActor() actor: RequestActor,
    @ShadowBanned() shadow: boolean,
  ): Promise<void> {
    const messageId = parseMessageId(rawId);
    const until = parseUntil(body);
    await this.commands.execute(new PinMessageCommand(instanceId, roomId, messageId, true, until, actor, auditActor(actor), shadow));
  }

  @Delete('rooms/:roomId/messages/:messageId/pin')
  @Requires(Access.permission('message:pin', { room: 'roomId' }))
  @HttpCode(204)
  async unpin(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @CurrentActor() actor: RequestActor,
    @ShadowBanned() shadow: boolean,
  ): Promise<void> {
    const messageId = parseMessageId(rawId);
    await this.commands.execute(new PinMessageCommand(instanceId, roomId, messageId, false, undefined, actor, auditActor(actor), shadow));
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** `until` as the decider compares times (UTC, milliseconds), or absent. */
const parseUntil = (body: unknown): string | undefined => {
  if (body === undefined || body === null || body === '') return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalid_body', 'The body is a JSON object: {until?}');
  const { until } = body as { until?: unknown };
  if (until === undefined || until === null) return undefined;
  if (typeof until !== 'string' || !RFC3339.test(until) || Number.isNaN(Date.parse(until))) {
    throw unprocessable('invalid_until', 'until must be a time in the future (RFC 3339)');
  }
  return new Date(until).toISOString();
};
