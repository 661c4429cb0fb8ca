import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/command-pipeline';
import { forbidden } from '../../shared/domain/errors';
import { RequestActor } from '../instances/authentication/access-token';
import { isMember, roomDecider, roomNotFound, roomStream } from '../rooms/domain/room.decider';
import { userDecider, userStream } from '../users/domain/user.decider';

/**
 * Who may see the cursors of a room, from write-side state (the room's and the caller's
 * streams, never a lagging read model): su callers, anyone for a public room, members for a
 * private one. A room that does not exist is a 404.
 */
@Injectable()
export class RoomCursorAccess {
  constructor(private readonly pipeline: CommandPipeline) {}

  async assertMayRead(instanceId: string, roomId: string, actor: RequestActor): Promise<void> {
    const { state: room } = await this.pipeline.load(roomStream(instanceId, roomId), roomDecider);
    if (!room.exists) throw roomNotFound(roomId);
    if (actor.su || !room.private) return;
    if (actor.userId !== undefined) {
      const { state: user } = await this.pipeline.load(userStream(instanceId, actor.userId), userDecider);
      if (user.exists && isMember(room, { user_id: actor.userId, user_created_at: user.createdAt! })) return;
    }
    throw forbidden('not_a_member', `The room "${roomId}" is private: only its members can see its cursors`);
  }
}
