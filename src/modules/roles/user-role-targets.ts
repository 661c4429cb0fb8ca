import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { roomDecider, roomNotFound, roomStream } from '../rooms/domain/room.decider';
import { userDecider, userNotFound, userStream } from '../users/domain/user.decider';

/** Assignments name users and rooms that exist (write-side state, as every command reads). */
@Injectable()
export class UserRoleTargets {
  constructor(private readonly pipeline: CommandPipeline) {}

  /** The user's incarnation (its creation time): what role assignments are bound to. */
  async requireUser(instanceId: string, userId: string): Promise<string> {
    const { state } = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    if (!state.exists || state.createdAt === null) throw userNotFound(userId);
    return state.createdAt;
  }

  async requireRoom(instanceId: string, roomId: string): Promise<void> {
    if (!(await this.pipeline.load(roomStream(instanceId, roomId), roomDecider)).state.exists) throw roomNotFound(roomId);
  }
}
