import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { RequestActor } from '../instances/authentication/access-token';
import { RoomAccess } from '../rooms/room-access';
import { userDecider, userStream } from '../users/domain/user.decider';
import { MessagePart } from './domain/message-parts';
import { messageDecider, messageStream } from './domain/message.decider';
import { attachmentsProjection } from '../../../projections/attachments/attachments.projection';
import { checkpointName } from '../../../projections/projection';
import { MESSAGE_READS } from './messages.read-model';
import { THREAD_READS } from '../threads/threads.read-model';
import { SentMessages } from './sent-messages';
import { DROPPED_ATTACHMENTS, DroppedAttachments } from './dropped-attachments.port';

/**
 * An edit or a delete is answered once the message reads as changed (a reply: in its thread
 * too) and the attachments it dropped are gone (their links answer 404, then their bytes and names are removed), in every
 * deployment.
 */
export const CHANGE_READS = [...MESSAGE_READS, checkpointName(attachmentsProjection)];

export type MessageChangeKind = { type: 'EditMessage'; parts: MessagePart[] } | { type: 'DeleteMessage'; tombstone: boolean };

/**
 * Edits and deletes a message on its own stream: the room must be the requester's to see, and
 * the requester the message's sender (the same incarnation of the user id, not a user created
 * again with it) or su. The one sequence behind the edit and delete routes.
 */
@Injectable()
export class MessageChanges {
  private readonly logger = new Logger('messages');

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(DROPPED_ATTACHMENTS) private readonly dropped: DroppedAttachments,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async apply(instanceId: string, roomId: string, messageId: number, change: MessageChangeKind, requester: RequestActor, actor: Actor): Promise<void> {
    const room = await this.access.readable(instanceId, roomId, requester);
    const sent = await this.sentMessages.find(instanceId, roomId, messageId);
    const userCreatedAt =
      requester.su || requester.userId === undefined
        ? null
        : (await this.pipeline.load(userStream(instanceId, requester.userId), userDecider)).state.createdAt;
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      messageStream(instanceId, messageId),
      messageDecider,
      {
        ...change,
        id: messageId,
        roomId,
        sent,
        roomCreatedAt: room.createdAt,
        actor: { userId: requester.userId, userCreatedAt, su: requester.su },
        now,
      },
      { instance_id: instanceId, actor, occurred_at: now },
      // A reply's change is answered once its thread (pages, summary, members) shows it too.
      { awaitProjections: sent?.parentId !== undefined ? [...CHANGE_READS, ...THREAD_READS] : CHANGE_READS },
    );
    // The change is stored: a failure here leaves the dropped attachments to the blob janitor's next sweep.
    await this.dropped.releaseDroppedBy(instanceId, messageId).catch((error: unknown) => {
      this.logger.warn(`the attachments dropped by message ${messageId} stay until the blob janitor's next sweep: ${String((error as Error)?.message ?? error)}`);
    });
  }
}
