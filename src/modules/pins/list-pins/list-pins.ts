import { Controller, Get, Inject, Param } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { MessageResponse, presentMessage } from '../../messages/presentation/message.presenter';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PinsReadModel } from '../pins.read-model';
import { messageOrReply, ThreadsReadModel, withThreads } from '../../threads/threads.read-model';
import { Restrictions } from '../../bans/restrictions';

export class ListPinsQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly actor: RequestActor,
  ) {}
}

export interface PinnedMessage {
  readonly message_id: number;
  readonly pinned_by?: string;
  readonly pinned_at: string;
  readonly until?: string;
  /** The message as v6 shows it. */
  readonly message: MessageResponse;
}

@QueryHandler(ListPinsQuery)
export class ListPinsHandler implements IQueryHandler<ListPinsQuery, { pins: PinnedMessage[] }> {
  constructor(
    private readonly access: RoomAccess,
    private readonly pins: PinsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly threads: ThreadsReadModel,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly restrictions: Restrictions,
  ) {}

  async execute(q: ListPinsQuery): Promise<{ pins: PinnedMessage[] }> {
    await this.access.readable(q.instanceId, q.roomId, q.actor);
    const viewer = await this.restrictions.shadowViewer(q.actor, q.roomId);
    const pins = await this.pins.standing(q.instanceId, q.roomId, this.clock.now().toISOString(), viewer);
    const found = await Promise.all(
      pins.map(async (pin) => {
        // A reply shown in its thread alone is listed too (with its `parent_id`, for the client to open its thread), as Slack and Stream list a pinned thread reply.
        const message = await messageOrReply(this.messages, this.threads, q.instanceId, q.roomId, pin.message_id, viewer);
        // A message deleted as a pin landed (its pin goes with its deletion otherwise) is not shown.
        return message && message.deleted_at === undefined ? { pin, message: presentMessage(6, message, this.attachments) } : null;
      }),
    );
    const standing = found.filter((f) => f !== null);
    // A pinned thread's first message carries its summary, as on the room's pages.
    const messages = await withThreads(this.threads, 6, q.instanceId, q.roomId, standing.map((f) => f.message), viewer);
    return {
      pins: standing.map(({ pin: { message_id, pinned_by, pinned_at, until } }, i) => ({
        message_id,
        ...(pinned_by !== undefined && { pinned_by }),
        pinned_at,
        ...(until !== undefined && { until }),
        message: messages[i],
      })),
    };
  }
}

/** A room's pinned messages, newest pinned first, each with the message (at most 50: no paging). */
@Controller(CHATKIT_V6_ROUTE)
export class ListPinsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('rooms/:roomId/pins')
  @Requires(Access.permission('room:messages:get', { room: 'roomId' }))
  list(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor): Promise<{ pins: PinnedMessage[] }> {
    return this.queries.execute(new ListPinsQuery(instanceId, roomId, actor));
  }
}
